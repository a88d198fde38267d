import Foundation
import IPCProtocol
import JSONValue
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ipc-bench subscribe`: the daemon's subscriber in the end-to-end benchmark (a player's view).
///
/// Subscribes to every event, decodes each line fully (JSONValue, as a Swift player would),
/// and for each `overlay.show` takes `raw.sentAt` (the sender's wall clock, ms) from the
/// wall clock now: the latency backend emit → event in the player's hands. Timeline ids are
/// `TAG-N`; statistics are kept per tag. Commands on stdin, one JSON line answered on stdout:
/// `report TAG`, `quit`. Prints `READY` once subscribed. Exits by itself after `--max-seconds`.
enum E2ESubscriber {
    struct TagStats: Sendable {
        var latencies: [Double] = []
        var received = 0
    }

    struct State: Sendable {
        var tags: [String: TagStats] = [:]
        var missed = 0
        var laggedLines = 0
        var otherEvents = 0
        var lastTag = ""
        var closed = false
    }

    final class Shared: Sendable {
        let state = Mutex(State())
    }

    static func run(_ options: Options) throws(BenchError) {
        let path = try options.string("socket")
        let lifetime = try options.double("max-seconds", default: 900)
        let fd = try connectUnix(path)
        let subscribe = RPCRequest(id: .number(1), method: "events.subscribe", params: .object([:])).line()
        guard sendAll(fd, subscribe) else { throw BenchError("cannot subscribe") }
        let reply = try RPCLoad.readLine(fd, timeoutMs: 5000)
        guard case .success(.response(let response)) = RPCIncoming.decode(line: reply), case .success = response.outcome else {
            throw BenchError("events.subscribe failed: \(String(decoding: reply.prefix(200), as: UTF8.self))")
        }
        let shared = Shared()
        startThread(name: "lifetime") {
            usleep(UInt32(min(lifetime, 3600) * 1_000_000))
            exit(3)
        }
        startThread(name: "events") { read(fd: fd, shared: shared) }
        printLine("READY")
        while let command = Swift.readLine() {
            let parts = command.split(separator: " ", maxSplits: 1).map(String.init)
            switch parts.first {
            case "report":
                let tag = parts.count > 1 ? parts[1] : ""
                let snapshot = shared.state.withLock { state -> (TagStats, Int, Int, Int, Bool) in
                    (state.tags[tag] ?? TagStats(), state.missed, state.laggedLines, state.otherEvents, state.closed)
                }
                let sorted = snapshot.0.latencies.sorted()
                let report: JSONValue = [
                    "tag": .string(tag), "received": .number(Double(snapshot.0.received)),
                    "p50": .number(percentile(sorted, 50)), "p99": .number(percentile(sorted, 99)),
                    "max": .number(sorted.last ?? 0),
                    "mean": .number(sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)),
                    "missedTotal": .number(Double(snapshot.1)), "laggedLinesTotal": .number(Double(snapshot.2)),
                    "otherEvents": .number(Double(snapshot.3)), "closed": .bool(snapshot.4),
                ]
                printLine(String(decoding: report.serialized(), as: UTF8.self))
            case "quit":
                close(fd)
                return
            default:
                printLine(#"{"error":"unknown command"}"#)
            }
        }
        close(fd)
    }

    private static func read(fd: Int32, shared: Shared) {
        let state = shared
        var framer = LineFramer(maxLineBytes: 16 << 20)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                state.state.withLock { $0.closed = true }
                return
            }
            let frames = buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            for frame in frames {
                guard case .line(let line) = frame,
                      case .success(.notification(let method, let params)) = RPCIncoming.decode(line: line),
                      method == eventNotificationMethod, let event = EventEnvelope(params: params) else { continue }
                let now = wallMs()
                state.state.withLock { state in
                    switch event.type {
                    case EventType.overlayShow:
                        guard let timelineId = event.data["timelineId"]?.stringValue,
                              let sentAt = event.data["raw"]?["sentAt"]?.doubleValue,
                              let dash = timelineId.lastIndex(of: "-") else { return }
                        let tag = String(timelineId[..<dash])
                        state.tags[tag, default: TagStats()].received += 1
                        state.tags[tag, default: TagStats()].latencies.append(now - sentAt)
                        state.lastTag = tag
                    case EventType.eventsLagged:
                        state.missed += event.data["missed"]?.intValue ?? 0
                        state.laggedLines += 1
                    default:
                        state.otherEvents += 1
                    }
                }
            }
        }
    }
}
