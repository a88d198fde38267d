import Foundation
@testable import InteractiveDaemon
import JSONValue
import Runtime
import RuntimeTesting
import SocketIO
import Synchronization
import Testing
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

/// A millisecond wall clock a test sets by hand.
final class ManualClock: Sendable {
    private let value: Mutex<Int64>

    init(_ start: Int64) { value = Mutex(start) }

    var now: Int64 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// A store in a temporary state directory, a bus, and trackers on them whose timers run on
/// `timers` and whose wall clock reads `clock` (10 000 ms unless the test moves it).
@LoopActor
final class TrackingHarness {
    static let now: Int64 = 10_000
    static let storeDelay = Duration.milliseconds(50)
    let directory: TemporaryDirectory
    let store: Store
    let timers = ManualScheduler()
    let clock = ManualClock(TrackingHarness.now)
    let bus = EventBus(bootId: "test")
    let log = Logger(target: .stderr, minimumPriority: .warning)

    init(directory: TemporaryDirectory? = nil) throws {
        self.directory = try directory ?? TemporaryDirectory()
        store = try Store(directory: self.directory.path, log: log)
    }

    /// The same state directory opened again, as after a restart (kill -9 included).
    func reopened() throws -> TrackingHarness { try TrackingHarness(directory: directory) }

    /// Runs `body` with a tracker on this harness, running (`run()`) as the daemon's managers run
    /// it, until `body` returns.
    func withTracker(renderTimeout: Duration = .seconds(5), _ body: @LoopActor (Tracker) async throws -> Void) async throws {
        let clock = self.clock
        let tracker = Tracker(store: store, bus: bus, log: log, deviceId: "device-1",
                              context: ClientContextBase(sdkVersion: "9.9.9", os: "Debian GNU/Linux 12"),
                              renderTimeout: renderTimeout, storeDelay: Self.storeDelay, clock: { clock.now }, timers: timers)
        let run: @LoopActor @Sendable () async -> Void = { await tracker.run() }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask(operation: run)
            // A throw cancels the group too.
            try await body(tracker)
            group.cancelAll()
        }
    }

    /// Lets the store's delay pass, and waits until the writes it made due are done.
    func storeDelayPassed(_ tracker: Tracker) async {
        timers.advance(by: Self.storeDelay)
        await tracker.writer.idle()
    }

    /// Returns once a timer is set for `deadline`: a task the test started reached its wait.
    func timerSet(at deadline: ContinuousClock.Instant) async {
        while !timers.deadlines.contains(deadline) { await Task.yield() }
    }

    /// The tracking section of the status board, as published.
    func status() async -> JSONValue? {
        await Task.yield()
        return bus.snapshot()["tracking"]
    }

    /// The acks in the store (none, and the test fails, when it cannot be read).
    func storedAcks() async -> [PendingAck] {
        do { return try await store.pendingAcks() } catch {
            Issue.record(error)
            return []
        }
    }

    /// The sessions with a row in the store.
    func storedSessions() async -> [String] {
        do { return try await store.trackingSessions().map(\.trackingId) } catch {
            Issue.record(error)
            return []
        }
    }
}

/// An `AckTransport` that records every emit and acknowledges as told.
@LoopActor
final class FakeTransport: AckTransport {
    enum Behaviour {
        /// The server acknowledges each ack at once.
        case ack
        /// The server acknowledges nothing until the test calls `acknowledgeAll()`.
        case silent
        /// `notConnected`: the connection went down.
        case offline
    }

    private let behaviour: Behaviour
    private(set) var emitted: [JSONValue] = []
    private var unacknowledged: [@LoopActor () -> Void] = []
    /// The write mark of each emit, numbered from 1.
    private var sequence = 0
    let connection: Int

    init(_ behaviour: Behaviour = .ack, connection: Int = 1) {
        self.behaviour = behaviour
        self.connection = connection
    }

    func emitAck(_ payload: [UInt8], acknowledged: @escaping @LoopActor () -> Void) -> AckSend {
        guard behaviour != .offline else { return .notConnected }
        do { emitted.append(try JSONValue.parse(payload)) } catch { Issue.record("an ack's payload is not JSON: \(error)") }
        sequence += 1
        switch behaviour {
        case .ack: acknowledged()
        case .silent, .offline: unacknowledged.append(acknowledged)
        }
        return .written(mark)
    }

    /// The mark of the last emit.
    var mark: SocketIOWriteMark { SocketIOWriteMark(connection: connection, sequence: sequence) }

    /// The server acknowledges what it received, oldest first.
    func acknowledgeAll() {
        let waiting = unacknowledged
        unacknowledged = []
        for acknowledged in waiting { acknowledged() }
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

extension Tracker {
    /// Records that `trackingId` arrived (and, with `loadedAt`, rendered).
    func receive(_ trackingId: String, timelineId: String? = nil, overlayType: String = "minigame", emitTimestamp: Int64? = 9_000,
                 durationSec: Int = 0, receivedAt: Int64 = 9_500, loadedAt: Int64? = nil) {
        record(.received(trackingId: trackingId, timelineId: timelineId ?? "tl-\(trackingId)", overlayType: overlayType,
                         emitTimestamp: emitTimestamp, durationSec: durationSec, receivedAt: receivedAt))
        if let loadedAt { record(.loaded(trackingId: trackingId, at: loadedAt)) }
    }
}
