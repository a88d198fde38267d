import Foundation
import IPCProtocol
import JSONValue
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ipc-bench rpc`: requests per second for one method over N connections, for several servers
/// measured in turn (the daemon and the baseline), round after round.
///
/// Each connection has its own thread and keeps `depth` requests in flight: depth 1 is strict
/// request/response (latency is measured per request), a larger depth is pipelining. Replies
/// are counted by their newline; the first reply of every connection is decoded and must be a
/// success. Counting starts after `warmup` seconds and stops at `warmup + seconds`.
enum RPCLoad {
    struct ConnectionResult: Sendable {
        var replies = 0
        var latenciesUs: [Double] = []
        var failed: String?
    }

    /// One measurement: replies per second over the counted window, and round trips (depth 1).
    struct Measurement {
        let rate: Double
        let latenciesUs: [Double]
    }

    static func run(_ options: Options) throws(BenchError) {
        let method = options.string("method", default: "daemon.status")
        let request = RPCRequest(id: .number(1), method: method).line()
        if let path = options.optionalString("probe") {
            let fd = try connectUnix(path)
            defer { close(fd) }
            printLine("reply_bytes \(try firstReply(fd: fd, request: request, method: method))")
            return
        }
        // `--targets name=PATH,name=PATH`: measured in turn, round after round, so that both
        // see the same machine; the first is compared with the others.
        var targets: [(name: String, path: String)] = []
        for item in options.string("targets", default: "").split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw BenchError("--targets wants name=PATH,name=PATH") }
            targets.append((parts[0], parts[1]))
        }
        guard !targets.isEmpty else { throw BenchError("--targets name=PATH[,name=PATH…] or --probe PATH is required") }
        let connections = try options.int("connections", default: 1)
        let depth = try options.int("depth", default: 1)
        let seconds = try options.double("seconds", default: 2)
        let warmup = try options.double("warmup", default: 0.3)
        let rounds = try options.int("rounds", default: 3)
        guard connections >= 1, connections <= 1000, depth >= 1, depth <= 4096, seconds > 0, seconds <= 60,
              rounds >= 1, rounds <= 20 else {
            throw BenchError("connections 1…1000, depth 1…4096, seconds 0…60, rounds 1…20")
        }
        var results: [String: [Measurement]] = [:]
        for _ in 0..<rounds {
            for target in targets {
                let measurement = try measure(path: target.path, request: request, method: method, connections: connections,
                                              depth: depth, seconds: seconds, warmup: warmup)
                results[target.name, default: []].append(measurement)
            }
        }
        let mode = depth == 1 ? "request/response (1 in flight per connection)" : "pipelined (\(depth) in flight per connection)"
        var medians: [String: Double] = [:]
        for target in targets {
            let measured = results[target.name] ?? []
            let rates = measured.map(\.rate).sorted()
            let median = percentile(rates, 50)
            medians[target.name] = median
            var line = "rpc \(target.name): \(method) over \(connections) connection(s), \(mode): median \(format(median, 0)) req/s"
                + " (rounds: \(measured.map { format($0.rate, 0) }.joined(separator: ", ")))"
            if depth == 1 {
                let latencies = measured.flatMap(\.latenciesUs).sorted()
                line += "; round trip p50 \(format(percentile(latencies, 50), 1)) µs, p99 \(format(percentile(latencies, 99), 1)) µs"
            }
            printLine(line)
            printLine("figure rpc.\(target.name).c\(connections).d\(depth) \(format(median, 0)) req/s")
        }
        if let first = targets.first, let value = medians[first.name] {
            for other in targets.dropFirst() {
                guard let base = medians[other.name], base > 0 else { continue }
                printLine("  \(first.name) / \(other.name) = \(format(value / base, 3))")
            }
        }
    }

    /// Sends one request and checks that its reply is a success; returns the reply's size.
    static func firstReply(fd: Int32, request: [UInt8], method: String) throws(BenchError) -> Int {
        guard sendAll(fd, request) else { throw BenchError("cannot send") }
        let line = try readLine(fd, timeoutMs: 5000)
        guard case .success(.response(let response)) = RPCIncoming.decode(line: line), case .success = response.outcome else {
            throw BenchError("\(method) did not succeed: \(String(decoding: line.prefix(300), as: UTF8.self))")
        }
        return line.count + 1
    }

    static func measure(path: String, request: [UInt8], method: String, connections: Int, depth: Int, seconds: Double,
                        warmup: Double) throws(BenchError) -> Measurement {
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        for _ in 0..<connections {
            let fd = try connectUnix(path)
            fds.append(fd)
            _ = try firstReply(fd: fd, request: request, method: method)
        }
        let results = Mutex<[ConnectionResult]>([])
        let finished = Countdown(connections)
        let start = nowNs() + 20_000_000
        let countFrom = start + UInt64(warmup * 1e9)
        let countUntil = countFrom + UInt64(seconds * 1e9)
        for fd in fds {
            startThread(name: "rpc-load") {
                let result = drive(fd: fd, request: request, depth: depth, start: start, countFrom: countFrom,
                                   countUntil: countUntil, limit: 50_000_000)
                results.withLock { $0.append(result) }
                finished.signal()
            }
        }
        guard finished.wait(timeoutSeconds: warmup + seconds + 15) else { throw BenchError("load threads did not finish") }
        let all = results.withLock { $0 }
        if let failure = all.compactMap(\.failed).first { throw BenchError(failure) }
        let replies = all.reduce(0) { $0 + $1.replies }
        return Measurement(rate: Double(replies) / seconds, latenciesUs: all.flatMap(\.latenciesUs))
    }

    /// One reply line (blocking, bounded), without its newline.
    static func readLine(_ fd: Int32, timeoutMs: Int) throws(BenchError) -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = nowNs() + UInt64(timeoutMs) * 1_000_000
        while nowNs() < deadline {
            guard waitReadable(fd, timeoutMs: 100) else { continue }
            let count = read(fd, &byte, 1)
            if count <= 0 { throw BenchError("connection closed while reading a reply") }
            if byte == 0x0A { return line }
            line.append(byte)
        }
        throw BenchError("no reply within \(timeoutMs) ms")
    }

    private static func drive(fd: Int32, request: [UInt8], depth: Int, start: UInt64, countFrom: UInt64,
                              countUntil: UInt64, limit: Int) -> ConnectionResult {
        var result = ConnectionResult()
        var batch: [UInt8] = []
        for _ in 0..<depth { batch.append(contentsOf: request) }
        let requestSize = request.count
        let now0 = nowNs()
        if now0 < start { usleep(UInt32((start - now0) / 1000)) }
        var inFlight = depth
        var sent = depth
        var sentAt = nowNs()
        guard sendAll(fd, batch) else { return ConnectionResult(failed: "send failed") }
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        let hardStop = countUntil + 3_000_000_000
        if depth == 1 { result.latenciesUs.reserveCapacity(200_000) }
        while inFlight > 0 {
            guard waitReadable(fd, timeoutMs: 1000) else {
                if nowNs() > hardStop { return ConnectionResult(failed: "replies stopped coming") }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return ConnectionResult(failed: "the server closed the connection") }
            let now = nowNs()
            let replies = buffer.withUnsafeBytes { countNewlines(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            guard replies > 0 else { continue }
            inFlight -= replies
            if now >= countFrom && now < countUntil {
                result.replies += replies
                if depth == 1 { result.latenciesUs.append(Double(now - sentAt) / 1000) }
            }
            if now < countUntil && sent < limit {
                let more = min(replies, limit - sent)
                let ok = batch.withUnsafeBytes { sendAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<(more * requestSize)])) }
                guard ok else { return ConnectionResult(failed: "send failed") }
                sentAt = nowNs()
                sent += more
                inFlight += more
            }
        }
        return result
    }
}

/// `ipc-bench fixed-reply-server`: the baseline peer. Answers every request line with a
/// canned reply of the daemon's reply size, with no parsing: a thread per connection doing
/// blocking read and write. It stops by itself after `--max-seconds`.
enum FixedReplyServer {
    static func run(_ options: Options) throws(BenchError) {
        let path = try options.string("socket")
        let size = try options.int("reply-bytes", default: 1024)
        let lifetime = try options.double("max-seconds", default: 600)
        let prefix = #"{"jsonrpc":"2.0","id":1,"result":{"pad":""#
        let suffix = "\"}}\n"
        let padding = max(0, size - prefix.utf8.count - suffix.utf8.count)
        let reply = Array((prefix + String(repeating: "x", count: padding) + suffix).utf8)
        var replies64: [UInt8] = []
        for _ in 0..<64 { replies64.append(contentsOf: reply) }
        let canned = replies64
        let listener = try listenUnix(path)
        startThread(name: "lifetime") {
            usleep(UInt32(min(lifetime, 3600) * 1_000_000))
            unlink(path)
            exit(0)
        }
        printLine("READY \(path)")
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                throw BenchError("accept: \(String(cString: strerror(errno)))")
            }
            startThread(name: "fixed-reply") { serve(fd: fd, canned: canned, replySize: reply.count) }
        }
    }

    private static func serve(fd: Int32, canned: [UInt8], replySize: Int) {
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            var pending = buffer.withUnsafeBytes { countNewlines(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            while pending > 0 {
                let now = min(pending, 64)
                let ok = canned.withUnsafeBytes { sendAll(fd, UnsafeRawBufferPointer(rebasing: $0[0..<(now * replySize)])) }
                guard ok else { return }
                pending -= now
            }
        }
    }
}
