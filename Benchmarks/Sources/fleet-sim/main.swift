// fleet-sim: how a fleet of interactived devices reconnects, and resends its tracking acks, when
// the backend comes back after an outage. See docs/fleet.md; Benchmarks/fleet/run.sh runs it
// and draws docs/fleet-reconnect.png.
import FleetSimulation
import SocketIO
import Glibc

let usage = """
    usage: fleet-sim [--devices N] [--outage-seconds S] [--seed N] [--notice heartbeat|reset]
                     [--accept-per-second N] [--acks-per-device N] [--sessions-per-device N]
                     [--failed-attempt-ms N] [--handshake-ms N]
                     [--base-ms N] [--cap-ms N] [--factor X] [--csv PATH]
    Defaults: 100000 devices, 300 s, seed 1, heartbeat (pingInterval 25 s, pingTimeout 20 s), no
    accept limit, 4 acks in 1 session, failed attempt 100 ms, handshake
    250 ms, the daemon's default reconnect policy.
    """

func fail(_ message: String) -> Never {
    var line = "fleet-sim: \(message)\n\(usage)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(64)
}

var scenario = FleetScenario()
var csvPath: String?
// The policy's values as given (ReconnectPolicy clamps; out-of-range values are refused below instead).
var (baseMs, capMs, factor) = (scenario.policy.baseMs, scenario.policy.capMs, scenario.policy.factor)
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    if option == "--help" || option == "-h" {
        print(usage)
        exit(0)
    }
    guard let value = arguments.popFirst() else { fail("\(option) needs a value") }
    func integer() -> Int {
        guard let number = Int(value) else { fail("\(option): \(value) is not a whole number") }
        return number
    }
    switch option {
    case "--devices": scenario.devices = integer()
    case "--outage-seconds": scenario.outageSeconds = integer()
    case "--seed": scenario.seed = UInt64(truncatingIfNeeded: integer())
    case "--notice":
        switch value {
        case "heartbeat": scenario.notice = .heartbeat(pingIntervalMs: 25_000, pingTimeoutMs: 20_000)
        case "reset": scenario.notice = .reset
        default: fail("--notice is heartbeat or reset")
        }
    case "--accept-per-second": scenario.acceptPerSecond = integer()
    case "--acks-per-device": scenario.acksPerDevice = integer()
    case "--sessions-per-device": scenario.sessionsPerDevice = integer()
    case "--failed-attempt-ms": scenario.failedAttemptMs = Int64(integer())
    case "--handshake-ms": scenario.handshakeMs = Int64(integer())
    case "--base-ms": baseMs = integer()
    case "--cap-ms": capMs = integer()
    case "--factor":
        guard let given = Double(value), given >= 1, given <= 100 else { fail("--factor is a number from 1 to 100") }
        factor = given
    case "--csv": csvPath = value
    default: fail("unknown option \(option)")
    }
}
if let problem = scenario.problem { fail(problem) }
if baseMs < 1 || capMs < baseMs || capMs > 3_600_000 {
    fail("the policy needs 1 ≤ baseMs ≤ capMs ≤ 3600000")
}
scenario.policy = ReconnectPolicy(baseMs: baseMs, capMs: capMs, factor: factor)

var simulation = FleetSimulation(scenario)
let run = simulation.run()

func rate(_ value: Double) -> String { String(Int(value.rounded())) }
func ratio(_ value: Double) -> String {
    let hundredths = Int((value * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}
func seconds(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) s"
}

let policy = scenario.policy
let capSeconds = max(1, policy.capMs / 1000)
let notice: String
switch scenario.notice {
case .heartbeat(let interval, let timeout): notice = "heartbeat (pingInterval \(interval) ms + pingTimeout \(timeout) ms)"
case .reset: notice = "reset (connections closed at once)"
}
let attempts = run.timeline.attempts
print("""
    fleet-sim: \(scenario.devices) devices, backend away \(scenario.outageSeconds) s, seed \(scenario.seed)
      reconnect: baseMs \(policy.baseMs), capMs \(policy.capMs), factor \(policy.factor), full jitter; notice: \(notice)
      failed attempt \(scenario.failedAttemptMs) ms, handshake \(scenario.handshakeMs) ms, accept limit \
    \(scenario.acceptPerSecond.map { "\($0)/s" } ?? "none")
    during the outage: peak \(run.timeline.attempts.prefix(run.returnSecond).max() ?? 0) attempts/s, \
    \(rate(run.outageAttemptsPerSecond(seconds: 60)))/s over its last minute
    reconnect attempts after the return:
      first minute: peak \(run.peak(attempts, seconds: 60))/s, mean \(rate(run.mean(attempts, seconds: 60)))/s, \
    peak-to-mean \(ratio(run.peakToMean(attempts, seconds: 60))) (target ≤ 2)
      first \(capSeconds) s (one cap): peak-to-mean \(ratio(run.peakToMean(attempts, seconds: capSeconds)))
      rejected over the accept limit: \(run.timeline.rejected.reduce(0, +))
      99 % connected after \(seconds(run.secondsUntilConnected(fraction: 0.99))), all after \(seconds(run.secondsUntilConnected(fraction: 1)))
    emit-ack resent after the return (\(scenario.acksPerDevice) per device in \(scenario.sessionsPerDevice) session(s)):
      max \(run.timeline.acksSent.max() ?? 0)/s, total \(run.timeline.acksSent.reduce(0, +)), \
    peak-to-mean over the first minute \(ratio(run.peakToMean(run.timeline.acksSent, seconds: 60))), \
    last sent in second \(run.secondsUntilLastAck) after the return
    """)
if let csvPath {
    guard let file = fopen(csvPath, "w") else { fail("cannot write \(csvPath)") }
    fputs(run.csv(secondsBefore: 60, secondsAfter: 75), file)
    fclose(file)
    print("per second, from 60 s before the return: \(csvPath)")
}
