import CEpoll
import Foundation
import IPCProtocol
import JSONValue
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What subscribers read, summed over all of them.
struct ReadTotals: Sendable {
    var received = 0
    var missed = 0
    var laggedLines = 0
    var outOfOrder = 0
    var bytes = 0
    var lastReadNs: UInt64 = 0
    var progress: [Int] = []
}

/// Lets a producer keep at most a window of events ahead of the slowest subscriber.
final class ProgressGate: Sendable {
    private struct State {
        var progress = 0
        var threshold = Int.max
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Called by the reader thread: every subscriber has read or been told it missed `progress` events.
    func advance(to progress: Int) {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            state.progress = progress
            guard progress >= state.threshold, let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.threshold = Int.max
            return waiter
        }
        waiter?.resume()
    }

    var progress: Int { state.withLock { $0.progress } }

    func wait(atLeast threshold: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.progress >= threshold { return true }
                state.threshold = threshold
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Reads N subscriber sockets on one thread (epoll): splits lines, checks that `seq` rises by
/// one (or that an `events.lagged` accounts for the gap), counts events, bytes and missed events.
final class SubscriberReader: Sendable {
    private let fds: [Int32]
    let gate = ProgressGate()
    private let expected = Atomic<Int>(Int.max)
    private let drainDeadline = Atomic<UInt64>(UInt64.max)
    private let totals = Mutex(ReadTotals())
    private let done = Countdown(1)

    init(fds: [Int32]) { self.fds = fds }

    func start(firstSeq: Int) {
        startThread(name: "subscribers") { [self] in
            let result = readAll(firstSeq: firstSeq)
            totals.withLock { $0 = result }
            done.signal()
        }
    }

    /// The producer published `count` events; the reader stops when every subscriber accounted
    /// for them, or at `deadline`.
    func finish(expected count: Int, deadline: UInt64) -> ReadTotals? {
        drainDeadline.store(deadline, ordering: .relaxed)
        expected.store(count, ordering: .releasing)
        guard done.wait(timeoutSeconds: Double(deadline - min(deadline, nowNs())) / 1e9 + 5) else { return nil }
        return totals.withLock { $0 }
    }

    private struct Stream {
        var carry: [UInt8] = []
        var received = 0
        var missed = 0
        var lastSeq: Int
    }

    private func readAll(firstSeq: Int) -> ReadTotals {
        var result = ReadTotals()
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { close(epoll) }
        var streams = [Stream](repeating: Stream(lastSeq: firstSeq), count: fds.count)
        for (index, fd) in fds.enumerated() {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
        }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        let hardStop = nowNs() + 600_000_000_000
        while nowNs() < hardStop {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 50) }
            if ready > 0 {
                for slot in 0..<Int(ready) {
                    let index = Int(events[slot].data.u64)
                    let fd = fds[index]
                    while true {
                        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                        if count <= 0 { break }
                        result.bytes += count
                        result.lastReadNs = nowNs()
                        buffer.withUnsafeBytes { raw in
                            consume(UnsafeRawBufferPointer(rebasing: raw[0..<count]), into: &streams[index], totals: &result)
                        }
                        if count < buffer.count { break }
                    }
                }
            }
            let progress = streams.reduce(Int.max) { min($0, $1.received + $1.missed) }
            gate.advance(to: progress)
            if progress >= expected.load(ordering: .acquiring) || nowNs() > drainDeadline.load(ordering: .relaxed) { break }
        }
        result.received = streams.reduce(0) { $0 + $1.received }
        result.missed = streams.reduce(0) { $0 + $1.missed }
        result.progress = streams.map { $0.received + $0.missed }
        return result
    }

    private func consume(_ bytes: UnsafeRawBufferPointer, into stream: inout Stream, totals: inout ReadTotals) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count, let hit = memchr(base + start, 0x0A, bytes.count - start) {
            let end = UnsafeRawPointer(hit) - base
            if stream.carry.isEmpty {
                line(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), &stream, &totals)
            } else {
                stream.carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                let carried = stream.carry
                stream.carry.removeAll(keepingCapacity: true)
                carried.withUnsafeBytes { line($0, &stream, &totals) }
            }
            start = end + 1
        }
        if start < bytes.count { stream.carry.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...])) }
    }

    private static let seqKey = Array(#""seq":"#.utf8)

    private func line(_ line: UnsafeRawBufferPointer, _ stream: inout Stream, _ totals: inout ReadTotals) {
        if let seq = Self.lastSeq(in: line) {
            stream.received += 1
            if seq != stream.lastSeq + 1 { totals.outOfOrder += 1 }
            stream.lastSeq = seq
            return
        }
        // No seq: events.lagged (or a reply). Decode it fully; it is rare.
        guard case .success(.notification(_, let params)) = RPCIncoming.decode(line: Array(line)),
              let envelope = EventEnvelope(params: params), envelope.type == EventType.eventsLagged,
              let missed = envelope.data["missed"]?.intValue else { return }
        stream.missed += missed
        stream.lastSeq += missed
        totals.laggedLines += 1
    }

    /// The value of the last `"seq":` in the line (the envelope's: it follows `data`).
    private static func lastSeq(in line: UnsafeRawBufferPointer) -> Int? {
        let key = seqKey
        var position = line.count - key.count
        while position >= 0 {
            if line[position] == key[0] && line[position + 1] == key[1] && line[position + 2] == key[2]
                && line[position + 3] == key[3] && line[position + 4] == key[4] && line[position + 5] == key[5] {
                var value = 0
                var cursor = position + key.count
                while cursor < line.count, line[cursor] == 0x20 { cursor += 1 }
                while cursor < line.count, line[cursor] >= 0x30, line[cursor] <= 0x39 {
                    value = value * 10 + Int(line[cursor] - 0x30)
                    cursor += 1
                }
                return value
            }
            position -= 1
        }
        return nil
    }
}

/// A typical `overlay.show` event's data (as OverlayManager publishes it; about 600 bytes as a line).
func sampleOverlayShow(_ number: Int) -> JSONValue {
    let timelineId = "bench-\(number)"
    let url = "http://127.0.0.1:8080/templates/quiz.html?id=\(timelineId)&logged=false&duration=15"
    return [
        "overlayId": .string("ov-a1b2c3-\(number)"), "timelineId": .string(timelineId), "kind": "minigame",
        "url": .string(url), "placement": ["location": 5, "widthPct": 36, "heightPct": 45], "durationSec": 15,
        "raw": [
            "timelineId": .string(timelineId), "typeTimeline": 1, "url": .string(url),
            "position": ["alignment": 5, "width": 36, "height": 45], "duration": 15, "targets": ["all"],
            "traceLock": false, "requireVip": false, "requireBet": false, "requireFanclub": false, "betAmount": 0,
            "sentAt": 1_764_400_000_000,
        ],
    ]
}

#if DEBUG || IPC_BENCH_TESTABLE
/// `ipc-bench events`: events per second from `EventBus.publish` to N real socket subscribers.
///
/// The daemon's IPC server runs in this process (InProcessDaemon); N client sockets subscribe
/// with `events.subscribe` and are read by one thread (SubscriberReader). Two modes:
/// - `window`: the producer stays at most `window` events (default 512, below the daemon's
///   queue limit of 1024) ahead of the slowest subscriber, so no event is dropped: the
///   lossless delivery rate.
/// - `flood`: the producer publishes as fast as it can; subscribers that fall behind get
///   `events.lagged`. Events read and events missed are counted separately.
/// Only events actually read count; the rate is events read per subscriber divided by the
/// time from the first publish to the last byte read.
enum EventsBench {
    static func run(_ options: Options) async throws {
        let subscriberCounts = try options.intList("subscribers", default: [1, 10, 100])
        let maxEvents = try options.int("events", default: 200_000)
        let seconds = try options.double("seconds", default: 5)
        let modes = options.string("modes", default: "window,flood").split(separator: ",").map(String.init)
        let window = try options.int("window", default: 512)
        let target = try options.optionalDouble("target")
        let directory = try options.string("dir")
        guard maxEvents >= 1, maxEvents <= 10_000_000, seconds > 0, seconds <= 60, window >= 1,
              subscriberCounts.allSatisfy({ (1...1000).contains($0) }) else {
            throw BenchError("events 1…10M, seconds 0…60, window ≥ 1, subscribers 1…1000")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

        // The per-event cost the bus pays once per publish: encoding the envelope.
        let encodeUs = encodeCost()
        let sampleLine = EventEnvelope(bootId: "0123456789abcdef0123456789abcdef", seq: 123_456, type: EventType.overlayShow,
                                       time: "2026-11-29T14:00:00.000Z", data: sampleOverlayShow(123_456)).line()
        printLine("events: payload an overlay.show line of \(sampleLine.count) bytes; EventEnvelope encode "
            + "\(format(encodeUs, 2)) µs/event (paid once per publish, shared by all subscribers)")

        for mode in modes {
            for count in subscriberCounts {
                let outcome = try await measure(subscribers: count, maxEvents: maxEvents, seconds: seconds,
                                                window: mode == "window" ? window : nil, directory: directory)
                let perSubscriber = outcome.perSubscriberRate
                let modeText = mode == "window" ? "lossless (window \(window))" : "flood (no flow control)"
                printLine("events \(modeText), \(count) subscriber(s): \(format(perSubscriber, 0)) events/s per subscriber, "
                    + "\(format(perSubscriber * Double(count), 0)) deliveries/s in all; published \(outcome.published) "
                    + "(\(format(outcome.publishRate, 0))/s), read \(outcome.totals.received), lagged (missed) \(outcome.totals.missed) "
                    + "in \(outcome.totals.laggedLines) events.lagged, order errors \(outcome.totals.outOfOrder), "
                    + "\(format(Double(outcome.totals.bytes) / outcome.seconds / 1_048_576, 1)) MiB/s read, \(format(outcome.seconds, 2)) s")
                printLine("figure events.\(mode).s\(count) \(format(perSubscriber, 0)) events/s")
                if let target, count == 1, mode == "window" {
                    printLine("\(verdict(perSubscriber >= target)) events to one subscriber (lossless) \(format(perSubscriber, 0))/s, target ≥ \(format(target, 0))/s")
                }
            }
        }
    }

    struct Outcome {
        let published: Int
        let publishRate: Double
        let totals: ReadTotals
        let seconds: Double
        let subscribers: Int
        var perSubscriberRate: Double { Double(totals.received) / Double(subscribers) / seconds }
    }

    static func measure(subscribers: Int, maxEvents: Int, seconds: Double, window: Int?, directory: String) async throws -> Outcome {
        let run = directory + "/run-\(subscribers)-\(window == nil ? "f" : "w")"
        try? FileManager.default.removeItem(atPath: run)
        let daemon = try await InProcessDaemon.start(socketPath: run + ".sock", stateDirectory: run)
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        let subscribe = RPCRequest(id: .number(1), method: "events.subscribe", params: ["types": ["overlay."]]).line()
        var firstSeq = 0
        for _ in 0..<subscribers {
            let fd = try connectUnix(run + ".sock")
            fds.append(fd)
            guard sendAll(fd, subscribe) else { throw BenchError("cannot subscribe") }
            let reply = try RPCLoad.readLine(fd, timeoutMs: 5000)
            guard case .success(.response(let response)) = RPCIncoming.decode(line: reply),
                  case .success(let result) = response.outcome, let seq = result["seq"]?.intValue else {
                throw BenchError("events.subscribe failed: \(String(decoding: reply.prefix(200), as: UTF8.self))")
            }
            firstSeq = seq
        }
        let reader = SubscriberReader(fds: fds)
        reader.start(firstSeq: firstSeq)
        let data = sampleOverlayShow(1)
        let start = nowNs()
        let stopAt = start + UInt64(seconds * 1e9)
        var published = 0
        while published < maxEvents {
            if let window, published - reader.gate.progress >= window {
                await reader.gate.wait(atLeast: published - window / 2)
            }
            await daemon.publish(EventType.overlayShow, data)
            published += 1
            if published & 255 == 0 && nowNs() >= stopAt { break }
        }
        let publishedAt = nowNs()
        guard let totals = reader.finish(expected: published, deadline: publishedAt + 5_000_000_000) else {
            throw BenchError("the subscriber reader did not finish")
        }
        await daemon.stop()
        let elapsed = Double(max(totals.lastReadNs, publishedAt) - start) / 1e9
        return Outcome(published: published, publishRate: Double(published) / (Double(publishedAt - start) / 1e9),
                       totals: totals, seconds: elapsed, subscribers: subscribers)
    }

    /// Microseconds to encode one overlay.show envelope with its data already built, as
    /// `EventBus.publish` does (median of 5 rounds of 2000).
    static func encodeCost() -> Double {
        var rounds: [Double] = []
        var sink = 0
        let data = sampleOverlayShow(1)
        for _ in 0..<5 {
            let start = nowNs()
            for seq in 0..<2000 {
                sink &+= EventEnvelope(bootId: "0123456789abcdef0123456789abcdef", seq: seq, type: EventType.overlayShow,
                                       time: "2026-11-29T14:00:00.000Z", data: data).line().count
            }
            rounds.append(Double(nowNs() - start) / 1000 / 2000)
        }
        if sink == 42 { print("") }
        return percentile(rounds.sorted(), 50)
    }
}
#endif

/// Raw transport baseline for the events figures: the same event lines written by one thread
/// straight to N Unix sockets (socketpairs, blocking writes, 32 lines per write), read by the
/// same SubscriberReader. No daemon. `--encode 1` (default): each event is encoded once with
/// EventEnvelope.line(), as EventBus.publish does; `--encode 0`: one line encoded in advance,
/// only its seq digits rewritten (JSON allows the spaces that pad them): what the kernel and
/// the reader cost.
enum RawEventsBaseline {
    static func run(_ options: Options) throws(BenchError) {
        let subscriberCounts = try options.intList("subscribers", default: [1, 10, 100])
        let maxEvents = try options.int("events", default: 200_000)
        let seconds = try options.double("seconds", default: 5)
        let encode = try options.int("encode", default: 1) != 0
        guard maxEvents >= 1, maxEvents <= 10_000_000, seconds > 0, seconds <= 60 else { throw BenchError("events 1…10M, seconds 0…60") }
        let marker = Array("1234567890".utf8)
        let template = EventEnvelope(bootId: "0123456789abcdef0123456789abcdef", seq: 1_234_567_890, type: EventType.overlayShow,
                                     time: "2026-11-29T14:00:00.000Z", data: sampleOverlayShow(1)).line()
        guard let digits = (0...(template.count - marker.count)).last(where: { Array(template[$0..<($0 + marker.count)]) == marker }) else {
            throw BenchError("no seq in the template line")
        }
        for count in subscriberCounts {
            var readers: [Int32] = []
            var writers: [Int32] = []
            for _ in 0..<count {
                var pair: [Int32] = [0, 0]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                    throw BenchError("socketpair failed")
                }
                readers.append(pair[0])
                writers.append(pair[1])
            }
            let reader = SubscriberReader(fds: readers)
            reader.start(firstSeq: 0)
            let data = sampleOverlayShow(1)
            let start = nowNs()
            let stopAt = start + UInt64(seconds * 1e9)
            var published = 0
            var batch: [UInt8] = []
            while published < maxEvents {
                batch.removeAll(keepingCapacity: true)
                let batchEnd = min(maxEvents, published + 32)
                while published < batchEnd {
                    published += 1
                    if encode {
                        EventEnvelope(bootId: "0123456789abcdef0123456789abcdef", seq: published, type: EventType.overlayShow,
                                      time: "2026-11-29T14:00:00.000Z", data: data).line().withUnsafeBytes { batch.append(contentsOf: $0) }
                    } else {
                        let offset = batch.count
                        batch.append(contentsOf: template)
                        var value = published
                        for index in stride(from: offset + digits + marker.count - 1, through: offset + digits, by: -1) {
                            batch[index] = value > 0 || index == offset + digits + marker.count - 1 ? UInt8(0x30 + value % 10) : 0x20
                            value /= 10
                        }
                    }
                }
                for fd in writers where !sendAll(fd, batch) { throw BenchError("baseline write failed") }
                if nowNs() >= stopAt { break }
            }
            let publishedAt = nowNs()
            guard let totals = reader.finish(expected: published, deadline: publishedAt + 5_000_000_000) else {
                throw BenchError("the baseline reader did not finish")
            }
            (readers + writers).forEach { close($0) }
            let elapsed = Double(max(totals.lastReadNs, publishedAt) - start) / 1e9
            let rate = Double(totals.received) / Double(count) / elapsed
            let what = encode ? "encode each event once + write" : "pre-encoded lines + write"
            printLine("baseline raw socket (\(what), no daemon), \(count) subscriber(s): \(format(rate, 0)) events/s per subscriber, "
                + "\(format(rate * Double(count), 0)) deliveries/s in all; read \(totals.received), order errors \(totals.outOfOrder), \(format(elapsed, 2)) s")
            printLine("figure baseline.\(encode ? "encoded" : "preencoded").s\(count) \(format(rate, 0)) events/s")
        }
    }
}
