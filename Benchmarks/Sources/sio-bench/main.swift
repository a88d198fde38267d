// sio-bench: throughput, latency and memory of SocketIOClient against Benchmarks/sender.py.
//
//   sio-bench --url ws://127.0.0.1:PORT [--count 50000] [--rate 500] [--seconds 10] [--size 1024]
//
// The events are consumed in the client's handler, on the event loop, as the daemon does.
//
// Phase 1 asks the sender for `count` events as fast as it can and reports events received and
// decoded per second. Phase 2 asks for `rate` events per second for `seconds`, each stamped with
// its send time, and reports the latency percentiles. Then the resident set size. One JSON line.
import Glibc
import JSONValue
import Runtime
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

/// The benchmark's side of the client: counts the burst's ticks and the rate phase's latencies
/// in the client's handler, and wakes `runBenchmark` when a phase ends.
@LoopActor
final class Consumer {
    enum Phase { case connecting, burst, rate, finished }
    var phase = Phase.connecting
    var received = 0
    var last = ContinuousClock.now
    var latencies: [Double] = []
    private var waiter: CheckedContinuation<Void, Never>?

    func handle(_ update: SocketIOClientUpdate) {
        switch update {
        case .state(let state):
            guard phase == .connecting else { return }
            switch state {
            case .connected: endPhase()
            case .disconnected(let error): fail("cannot connect: \(error)")
            case .refused(let error): fail("refused: \(error)")
            default: break
            }
        case .event(let event):
            switch phase {
            case .burst where event.name == "tick":
                guard event.args.first?["i"]?.intValue == received else { fail("tick out of order") }
                received += 1
                last = ContinuousClock.now
            case .rate where event.name == "tick":
                if let sent = event.args.first?["t"]?.doubleValue { latencies.append(wallClockMs() - sent) }
            case .burst, .rate:
                if event.name == "done" { endPhase() }
            case .connecting, .finished:
                break
            }
        case .carried:
            break
        }
    }

    /// Waits for the current phase to end (the handler runs on the loop only once this suspends).
    func phaseEnded() async {
        await withCheckedContinuation { waiter = $0 }
    }

    private func endPhase() {
        waiter?.resume()
        waiter = nil
    }
}

/// Runs both phases on the loop and returns the report.
@LoopActor
func runBenchmark(consumer: Consumer, client: SocketIOClient, count: Int, rate: Int, seconds: Double, size: Int) async throws -> JSONValue {
    client.connect()
    await consumer.phaseEnded()
    let connectedRSS = memory().rss

    // Phase 1: throughput.
    let start = ContinuousClock.now
    consumer.phase = .burst
    try client.emit("start", [["mode": "burst", "count": .number(Double(count)), "size": .number(Double(size))]])
    await consumer.phaseEnded()
    let received = consumer.received
    let elapsed = consumer.last - start
    let burstSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let throughput = Double(received) / burstSeconds

    // Phase 2: latency at a fixed rate.
    consumer.phase = .rate
    consumer.latencies.reserveCapacity(Int(Double(rate) * seconds))
    try client.emit("start", [["mode": "rate", "rate": .number(Double(rate)), "seconds": .number(seconds), "size": .number(Double(size))]])
    await consumer.phaseEnded()
    consumer.phase = .finished
    var latencies = consumer.latencies
    latencies.sort()
    let (rss, peak) = memory()
    await client.disconnect()
    let sorted = latencies
    /// Nearest rank, as ipc-bench's `percentile` and Benchmarks/benchlib/stats.py.
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
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

let report = await Task { @LoopActor () -> Result<JSONValue, any Error> in
    let consumer = Consumer()
    let client = SocketIOClient(configuration: SocketIOConfiguration(url: url, reconnect: ReconnectPolicy(enabled: false)),
                                credentials: { SocketIOCredentials() }, handler: { consumer.handle($0) })
    do {
        return .success(try await runBenchmark(consumer: consumer, client: client, count: count, rate: rate, seconds: seconds, size: size))
    } catch {
        return .failure(error)
    }
}.value
switch report {
case .success(let report): print(report.jsonText)
case .failure(let error): fail("\(error)")
}
