// sio-bench: throughput, latency and memory of SocketIOClient against Benchmarks/sender.py.
//
//   sio-bench --url ws://127.0.0.1:PORT [--count 50000] [--rate 500] [--seconds 10] [--size 1024]
//             [--cooperative-pool]
//
// The consuming task prefers the client's I/O executor unless --cooperative-pool is given.
//
// Phase 1 asks the sender for `count` events as fast as it can and reports events received and
// decoded per second. Phase 2 asks for `rate` events per second for `seconds`, each stamped with
// its send time, and reports the latency percentiles. Then the resident set size. One JSON line.
import Glibc
import JSONValue
import SocketIO

func option(_ name: String, _ fallback: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    return arguments[index + 1]
}

func wallClockMs() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

/// VmRSS and VmHWM of this process, in KiB.
func memory() -> (rss: Int, peak: Int) {
    guard let file = fopen("/proc/self/status", "r") else { return (0, 0) }
    defer { fclose(file) }
    var rss = 0
    var peak = 0
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let value = Int(text.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        if text.hasPrefix("VmRSS:") { rss = value }
        if text.hasPrefix("VmHWM:") { peak = value }
    }
    return (rss, peak)
}

func fail(_ message: String) -> Never {
    var line = "sio-bench: \(message)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(1)
}

let url = option("--url", "")
guard !url.isEmpty else { fail("usage: sio-bench --url ws://127.0.0.1:PORT [--count N] [--rate R] [--seconds S] [--size B]") }
let count = Int(option("--count", "50000")) ?? 50_000
let rate = Int(option("--rate", "500")) ?? 500
let seconds = Double(option("--seconds", "10")) ?? 10
let size = Int(option("--size", "1024")) ?? 1024

/// Runs both phases off the main actor and returns the report.
func runBenchmark(client: SocketIOClient, count: Int, rate: Int, seconds: Double, size: Int) async throws -> JSONValue {
    await client.connect()
    for await state in client.states {
        if case .connected = state { break }
        if case .disconnected(let error) = state { fail("cannot connect: \(error)") }
        if case .refused(let error) = state { fail("refused: \(error)") }
    }

    var events = client.events.makeAsyncIterator()
    let connectedRSS = memory().rss

    // Phase 1: throughput.
    let start = ContinuousClock.now
    try await client.emit("start", [["mode": "burst", "count": .number(Double(count)), "size": .number(Double(size))]])
    var received = 0
    var last = start
    while let event = await events.next() {
        if event.name == "tick" {
            guard event.args.first?["i"]?.intValue == received else { fail("tick out of order") }
            received += 1
            last = ContinuousClock.now
        } else if event.name == "done" {
            break
        }
    }
    let elapsed = last - start
    let burstSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let throughput = Double(received) / burstSeconds

    // Phase 2: latency at a fixed rate.
    try await client.emit("start", [["mode": "rate", "rate": .number(Double(rate)), "seconds": .number(seconds), "size": .number(Double(size))]])
    var latencies: [Double] = []
    latencies.reserveCapacity(Int(Double(rate) * seconds))
    while let event = await events.next() {
        if event.name == "tick", let sent = event.args.first?["t"]?.doubleValue {
            latencies.append(wallClockMs() - sent)
        } else if event.name == "done" {
            break
        }
    }
    latencies.sort()
    let (rss, peak) = memory()
    await client.disconnect()
    let sorted = latencies
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
    func rounded(_ value: Double) -> JSONValue { .number((value * 1000).rounded() / 1000) }
    return [
        "client": "SocketIO (Swift)",
        "burst_events": .number(Double(received)),
        "events_per_second": .number(throughput.rounded()),
        "rate_events": .number(Double(latencies.count)),
        "p50_ms": rounded(percentile(0.5)),
        "p99_ms": rounded(percentile(0.99)),
        "rss_connected_kib": .number(Double(connectedRSS)),
        "rss_kib": .number(Double(rss)),
        "peak_rss_kib": .number(Double(peak)),
    ]
}

// By default the consuming task prefers the client's I/O executor, as a Socket.IO consumer in an
// event loop does; --cooperative-pool keeps it on Swift's default executor (one more thread hop).
let onIOThread = !CommandLine.arguments.contains("--cooperative-pool")
let client = SocketIOClient(configuration: SocketIOConfiguration(url: url, reconnect: ReconnectPolicy(enabled: false)),
                            credentials: { SocketIOCredentials() })
do {
    var report: JSONValue
    if onIOThread {
        report = try await Task(executorPreference: client.ioExecutor) {
            try await runBenchmark(client: client, count: count, rate: rate, seconds: seconds, size: size)
        }.value
    } else {
        report = try await runBenchmark(client: client, count: count, rate: rate, seconds: seconds, size: size)
    }
    if case .object(var members) = report {
        members["consumer"] = onIOThread ? "io-executor" : "cooperative-pool"
        report = .object(members)
    }
    print(report.jsonText)
} catch {
    fail("\(error)")
}
