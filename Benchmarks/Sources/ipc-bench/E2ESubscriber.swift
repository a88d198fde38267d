import Foundation
import IPCProtocol
import JSONValue
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ipc-bench subscribe`: the daemon's subscriber in the end-to-end benchmark (a player's view).
///
/// Subscribes to every event, decodes each line fully (JSONValue, as a Swift player would; with
/// `--scan 1` it only scans each line for the fields it needs, see `scanned`),
/// and for each `overlay.show` takes `raw.sentAt` (the sender's wall clock, ms) from the
/// wall clock now: the latency backend emit → event in the player's hands. Timeline ids are
/// `TAG-N`; statistics are kept per tag: count, latencies, the monotonic times of the first and
/// the last `overlay.show`, and shows whose N is not the previous one's + 1. Prints `READY` once
/// subscribed. Exits by itself after `--max-seconds`. Commands on stdin, each answered by one
/// JSON line on stdout: `report TAG`; `expect TAG COUNT` (answered at once, then one more line,
/// `{"reached": TAG, …}`, once COUNT shows of TAG were read or the last, TAG-(COUNT-1), was: a
/// driver learns the moment without polling, and whether any went missing); `quit`.
enum E2ESubscriber {
    struct TagStats: Sendable {
        var latencies: [Double] = []
        var received = 0
        var firstNs: UInt64?
        var lastNs: UInt64?
        var lastNumber: Int?
        var outOfOrder = 0
        var expected: Int?

        mutating func arrived(number: Int?, latencyMs: Double, at time: UInt64) {
            received += 1
            latencies.append(latencyMs)
            if firstNs == nil { firstNs = time }
            lastNs = time
            if let last = lastNumber, number != last + 1 { outOfOrder += 1 }
            lastNumber = number
        }

        /// Count, order and timing, as `report` and `reached` print them.
        var timing: JSONObject {
            [
                "received": .number(Double(received)), "outOfOrder": .number(Double(outOfOrder)),
                "firstMs": firstNs.map { .number(Double($0) / 1e6) } ?? .null,
                "lastMs": lastNs.map { .number(Double($0) / 1e6) } ?? .null,
            ]
        }
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
        let scan = try options.int("scan", default: 0) == 1
        startThread(name: "events") { read(fd: fd, shared: shared, scan: scan) }
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
                var report: JSONObject = [
                    "tag": .string(tag),
                    "p50": .number(percentile(sorted, 50)), "p99": .number(percentile(sorted, 99)),
                    "max": .number(sorted.last ?? 0),
                    "mean": .number(sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)),
                    "missedTotal": .number(Double(snapshot.1)), "laggedLinesTotal": .number(Double(snapshot.2)),
                    "otherEvents": .number(Double(snapshot.3)), "closed": .bool(snapshot.4),
                ]
                report.merge(snapshot.0.timing) { _, timing in timing }
                printLine(String(decoding: JSONValue.object(report).serialized(), as: UTF8.self))
            case "expect":
                let words = parts.count > 1 ? parts[1].split(separator: " ").map(String.init) : []
                guard words.count == 2, let count = Int(words[1]), count > 0 else {
                    printLine(#"{"error":"expect TAG COUNT"}"#)
                    continue
                }
                shared.state.withLock { $0.tags[words[0], default: TagStats()].expected = count }
                let answer: JSONValue = ["expecting": .string(words[0]), "count": .number(Double(count))]
                printLine(String(decoding: answer.serialized(), as: UTF8.self))
            case "quit":
                close(fd)
                return
            default:
                printLine(#"{"error":"unknown command"}"#)
            }
        }
        close(fd)
    }

    /// What the subscriber takes from one event line.
    enum Observed {
        case show(timelineId: String, sentAt: Double)
        case lagged(missed: Int)
        case other
    }

    /// The line decoded in full (JSONValue, as a Swift player would); nil for a line that is not
    /// an event.
    static func decoded(_ line: [UInt8]) -> Observed? {
        guard case .success(.notification(let method, let params)) = RPCIncoming.decode(line: line),
              method == eventNotificationMethod, let event = EventEnvelope(params: params) else { return nil }
        switch event.type {
        case EventType.overlayShow:
            guard let timelineId = event.data["timelineId"]?.stringValue,
                  let sentAt = event.data["raw"]?["sentAt"]?.doubleValue else { return .other }
            return .show(timelineId: timelineId, sentAt: sentAt)
        case EventType.eventsLagged:
            return .lagged(missed: event.data["missed"]?.intValue ?? 0)
        default:
            return .other
        }
    }

    /// The same found by scanning the bytes for the few fields it needs (`--scan 1`: a
    /// subscriber that costs next to nothing, so it keeps up with a burst on a busy machine).
    /// Relies on the daemon's sorted keys and on `timelineId` and `sentAt` being plain: a string
    /// without escapes and a number.
    static func scanned(_ line: [UInt8]) -> Observed? {
        if contains(line, #""type":"overlay.show""#) {
            guard let timelineId = value(after: #""timelineId":""#, in: line, until: UInt8(ascii: "\"")),
                  let sentAt = value(after: #""sentAt":"#, in: line, until: nil).flatMap(Double.init) else { return .other }
            return .show(timelineId: timelineId, sentAt: sentAt)
        }
        if contains(line, #""type":"events.lagged""#) {
            return .lagged(missed: value(after: #""missed":"#, in: line, until: nil).flatMap(Int.init) ?? 0)
        }
        return contains(line, #""method":"event""#) ? .other : nil
    }

    private static func find(_ needle: String, in line: [UInt8]) -> Int? {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first, line.count >= pattern.count else { return nil }
        var index = 0
        while index + pattern.count <= line.count {
            if line[index] == first, line[index..<(index + pattern.count)].elementsEqual(pattern) { return index + pattern.count }
            index += 1
        }
        return nil
    }

    private static func contains(_ line: [UInt8], _ needle: String) -> Bool { find(needle, in: line) != nil }

    /// The text after `key` up to `terminator` (a number's end when nil).
    private static func value(after key: String, in line: [UInt8], until terminator: UInt8?) -> String? {
        guard let start = find(key, in: line) else { return nil }
        var end = start
        while end < line.count {
            let byte = line[end]
            if let terminator { if byte == terminator { break } } else if !(byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+")
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)) { break }
            end += 1
        }
        return end > start ? String(decoding: line[start..<end], as: UTF8.self) : nil
    }

    private static func read(fd: Int32, shared: Shared, scan: Bool) {
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
                guard case .line(let line) = frame, let observed = scan ? scanned(line) : decoded(line) else { continue }
                let now = wallMs()
                let arrival = nowNs()
                let reached = state.state.withLock { state -> JSONValue? in
                    switch observed {
                    case .show(let timelineId, let sentAt):
                        guard let dash = timelineId.lastIndex(of: "-") else { return nil }
                        let tag = String(timelineId[..<dash])
                        let number = Int(timelineId[timelineId.index(after: dash)...])
                        state.tags[tag, default: TagStats()].arrived(number: number, latencyMs: now - sentAt, at: arrival)
                        state.lastTag = tag
                        // Once: at the COUNT-th show, or at the last one (N = COUNT - 1) when some went missing.
                        guard let stats = state.tags[tag], let expected = stats.expected,
                              stats.received == expected || number == expected - 1 else { return nil }
                        state.tags[tag]?.expected = nil
                        return .object(stats.timing.merging(["reached": .string(tag), "missedTotal": .number(Double(state.missed))]) {
                            timing, _ in timing
                        })
                    case .lagged(let missed):
                        state.missed += missed
                        state.laggedLines += 1
                    case .other:
                        state.otherEvents += 1
                    }
                    return nil
                }
                if let reached { printLine(String(decoding: reached.serialized(), as: UTF8.self)) }
            }
        }
    }
}
