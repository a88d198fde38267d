import Foundation
@testable import InteractiveDaemon
import JSONValue
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A temporary folder removed when the last reference goes.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var bytes = Array("/tmp/tracking-test-XXXXXX".utf8CString)
        guard mkdtemp(&bytes) != nil else { throw TestFailure("mkdtemp failed") }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A store in a temporary state directory, a bus, and services built on them, whose timers run
/// on `clock`.
struct TrackingHarness {
    static let now: Int64 = 10_000
    let directory: TemporaryDirectory
    let store: Store
    let clock = TestClock()
    let bus = EventBus(bootId: "test")
    let log = Logger(target: .stderr, minimumPriority: .warning)
    /// The services made here: their queued store writes are awaited before the store is read.
    private let services = ServiceList()

    init(directory: TemporaryDirectory? = nil) throws {
        self.directory = try directory ?? TemporaryDirectory()
        store = try Store(directory: self.directory.path, log: log)
    }

    /// The same state directory opened again, as after a restart.
    func reopened() throws -> TrackingHarness { try TrackingHarness(directory: directory) }

    func service(renderTimeout: Duration = .seconds(5), ackTimeout: Duration = .seconds(10),
                 clock: @escaping @Sendable () -> Int64 = { TrackingHarness.now }) -> TrackingService {
        let service = TrackingService(store: store, bus: bus, log: log, deviceId: "device-1",
                                      context: ClientContextBase(sdkVersion: "9.9.9", os: "Debian GNU/Linux 12"),
                                      renderTimeout: renderTimeout, ackTimeout: ackTimeout, clock: clock, timers: self.clock)
        services.add(service)
        return service
    }

    /// Waits until every store write queued so far by the services made here is done.
    func settled() async {
        for service in services.all { await service.flushStore() }
    }

    /// Waits until `service` delivered every ack it holds, or is offline (`drain`: its limit, on
    /// `clock`, passes only when the test advances it; the suite's time limit bounds the wait).
    func delivered(by service: TrackingService) async {
        await service.drain(within: .seconds(3600))
    }

    func status() async -> JSONValue? {
        await settled()
        return await bus.snapshot()["tracking"]
    }

    func storedAcks() async throws -> [PendingAck] {
        await settled()
        return try await store.pendingAcks()
    }

    func storedSessions() async throws -> [String] {
        await settled()
        return try await store.trackingSessions().map(\.trackingId)
    }
}

/// The services a harness made, each running (`run()`) until the harness goes.
final class ServiceList: @unchecked Sendable {
    private let lock = NSLock()
    private var services: [TrackingService] = []
    private var running: [Task<Void, Never>] = []

    func add(_ service: TrackingService) {
        // Unstructured: the service runs as long as the harness that the test holds, as the
        // daemon's service group runs it; the harness's end cancels it.
        let task = Task { await service.run() }
        lock.lock()
        services.append(service)
        running.append(task)
        lock.unlock()
    }

    deinit {
        for task in running { task.cancel() }
    }

    var all: [TrackingService] {
        lock.lock()
        defer { lock.unlock() }
        return services
    }
}

/// An `AckTransport` that records every emit and answers as told.
actor FakeTransport: AckTransport {
    enum Behaviour: Sendable {
        /// The server acks at once.
        case ack
        /// The server never acks: `notAcked` after the timeout, on this clock.
        case silent(TestClock)
        /// `notConnected` at once.
        case offline
        /// The emit waits until `drop()`, then `notConnected`.
        case hold
    }

    private let behaviour: Behaviour
    private(set) var emitted: [JSONValue] = []
    private(set) var timeouts: [Duration] = []
    private var held: [CheckedContinuation<AckDelivery, Never>] = []
    private nonisolated let emits = CountWaiters()
    private nonisolated let returns = CountWaiters()

    init(_ behaviour: Behaviour = .ack) { self.behaviour = behaviour }

    func emitAck(_ payload: JSONValue, timeout: Duration) async -> AckDelivery {
        emitted.append(payload)
        timeouts.append(timeout)
        emits.add(1)
        defer { returns.add(1) }
        switch behaviour {
        case .ack:
            return .acked
        case .offline:
            return .notConnected
        case .silent(let clock):
            await clock.sleep(for: timeout) {}
            return .notAcked
        case .hold:
            return await withCheckedContinuation { held.append($0) }
        }
    }

    /// The connection drops: held emits end with `notConnected`.
    func drop() {
        for continuation in held { continuation.resume(returning: .notConnected) }
        held.removeAll()
    }

    /// Returns once `count` emits returned their outcome (or the test's time limit cancelled the wait).
    func waitForReturns(_ count: Int) async {
        await returns.wait(until: count)
    }

    /// The emits so far, once there are `count` of them (or the test's time limit cancelled the wait).
    func waitForEmits(_ count: Int) async -> [JSONValue] {
        await emits.wait(until: count)
        return emitted
    }
}

/// A count that tasks wait on: each until the count reaches its target, or until its task is
/// cancelled (a suite's time limit cancels a test that waits too long, and the wait then ends).
final class CountWaiters: Sendable {
    private struct State {
        var count = 0
        var nextId = 0
        var waiting: [Int: (target: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    }

    private let state = Mutex(State())

    /// Adds `amount` to the count, resuming those waiting for what it reached.
    func add(_ amount: Int) {
        let reached = state.withLock { state in
            state.count += amount
            let reached = state.waiting.filter { $0.value.target <= state.count }
            for id in reached.keys { state.waiting[id] = nil }
            return reached.values.map(\.continuation)
        }
        for continuation in reached { continuation.resume() }
    }

    /// Returns once the count is at least `target`, or the task is cancelled.
    func wait(until target: Int) async {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked under the lock, so that a cancellation either comes before (and is
                // seen here) or finds the waiter registered.
                let ready = state.withLock { state in
                    guard state.count < target, !Task.isCancelled else { return true }
                    state.waiting[id] = (target, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}

extension JSONValue {
    var stage: String? { self["stage"]?.stringValue }
    var trackingId: String? { self["trackingId"]?.stringValue }
    var context: JSONValue { self["clientContext"] ?? .null }
}

extension Array where Element == JSONValue {
    /// The stages emitted for one tracking id, in order.
    func stages(of trackingId: String) -> [String] { filter { $0.trackingId == trackingId }.compactMap(\.stage) }
}

/// A millisecond clock a test sets by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64

    init(_ start: Int64) { value = start }

    var now: Int64 {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
