import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `ipc-bench ready`: time from exec to READY=1 and idle RSS of the real `interactived`.
///
/// The daemon is started with posix_spawn and a NOTIFY_SOCKET of our own (a datagram socket);
/// the clock starts just before posix_spawn and stops when the READY=1 datagram is read. In
/// the same loop, interleaved run by run, three baselines: exec → exit of `/bin/true`, exec →
/// exit of `interactived --version` (the same binary: dynamic loader, libraries, Swift runtime,
/// no daemon work), and exec → READY=1 of `systemd-notify --ready --no-block` (a small C
/// program that links libsystemd). The state directory is reused across runs (one warm-up run creates it),
/// as on a device that reboots; the binary is in the page cache.
enum ReadyBench {
    static func run(_ options: Options) throws(BenchError) {
        let daemon = try options.string("daemon")
        let directory = try options.string("dir")
        let runs = try options.int("runs", default: 25)
        let idleSeconds = try options.double("idle-seconds", default: 2)
        let idleRuns = try options.int("idle-runs", default: 3)
        let targetMs = try options.double("target-ms", default: 20)
        let targetRSSMiB = try options.double("target-rss-mib", default: 16)
        guard runs >= 1, runs <= 500, idleRuns >= 1, idleRuns <= 20, idleSeconds >= 0, idleSeconds <= 60 else {
            throw BenchError("runs 1…500, idle-runs 1…20, idle-seconds 0…60")
        }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let notifyPath = directory + "/notify.sock"
        let notify = try bindDatagram(notifyPath)
        defer { close(notify) }
        let stderrPath = directory + "/daemon.stderr"
        let daemonArgs = ["--socket", directory + "/d.sock", "--state-directory", directory + "/state",
                          "--config", directory + "/absent-config.json", "--log-target", "stderr"]
        var environment = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM", "WATCHDOG_USEC",
                    "WATCHDOG_PID", "INTERACTIVED_SOCKET", "INTERACTIVED_CONFIG"] {
            environment.removeValue(forKey: key)
        }
        environment["NOTIFY_SOCKET"] = notifyPath
        let env = environment.map { "\($0.key)=\($0.value)" }
        let notifyTool = ["/usr/bin/systemd-notify", "/bin/systemd-notify"].first { FileManager.default.isExecutableFile(atPath: $0) }

        // Warm-up: creates the store, fills the page cache.
        _ = try startDaemon(daemon, daemonArgs, env: env, notify: notify, stderrPath: stderrPath, stop: true)

        var trueMs: [Double] = []
        var versionMs: [Double] = []
        var notifyMs: [Double] = []
        var readyMs: [Double] = []
        var stopMs: [Double] = []
        var rssAtReady: [Int] = []
        for _ in 0..<runs {
            trueMs.append(try timeToExit("/bin/true", [], env: env))
            versionMs.append(try timeToExit(daemon, ["--version"], env: env))
            if let notifyTool {
                drain(notify)
                let start = nowNs()
                let pid = try spawn(notifyTool, ["--ready", "--no-block"], env: env, stderrPath: "/dev/null")
                try waitForMessage(notify, containing: "READY=1", timeoutMs: 5000)
                notifyMs.append(Double(nowNs() - start) / 1e6)
                _ = waitExit(pid, timeoutMs: 5000)
            }
            let started = try startDaemon(daemon, daemonArgs, env: env, notify: notify, stderrPath: stderrPath, stop: true)
            readyMs.append(started.readyMs)
            stopMs.append(started.stopMs)
            rssAtReady.append(started.rssAtReadyKiB)
        }

        var idle: [[String: Int]] = []
        var breakdown: [(name: String, kib: Int)] = []
        for _ in 0..<idleRuns {
            let started = try startDaemon(daemon, daemonArgs, env: env, notify: notify, stderrPath: stderrPath, stop: false)
            usleep(UInt32(idleSeconds * 1_000_000))
            var fields = procStatusKiB(pid: started.pid)
            fields["Threads"] = threadCount(pid: started.pid)
            idle.append(fields)
            if breakdown.isEmpty { breakdown = rssByMapping(pid: started.pid) }
            kill(started.pid, SIGTERM)
            guard waitExit(started.pid, timeoutMs: 10_000) != nil else { throw BenchError("daemon did not stop") }
        }

        func summary(_ values: [Double]) -> String {
            let sorted = values.sorted()
            return "median \(format(percentile(sorted, 50))) ms, p90 \(format(percentile(sorted, 90))) ms, "
                + "min \(format(sorted.first ?? .nan)) ms, max \(format(sorted.last ?? .nan)) ms"
        }
        let readyMedian = percentile(readyMs.sorted(), 50)
        let readyP90 = percentile(readyMs.sorted(), 90)
        printLine("ready: exec → READY=1 of interactived, \(runs) runs: \(summary(readyMs))")
        printLine("  baseline exec → exit of /bin/true: \(summary(trueMs))")
        printLine("  baseline exec → exit of interactived --version (same binary, no daemon work): \(summary(versionMs))")
        if notifyTool != nil {
            printLine("  baseline exec → READY=1 of systemd-notify --ready --no-block (C, libsystemd): \(summary(notifyMs))")
        }
        let notifyMedian = percentile(notifyMs.sorted(), 50)
        printLine("  ratios of medians: READY=1 / systemd-notify READY=1 = \(notifyTool == nil ? "n/a" : format(readyMedian / notifyMedian))×, "
            + "READY=1 / true = \(format(readyMedian / percentile(trueMs.sorted(), 50)))× (--version includes the process exit, READY=1 does not)")
        printLine("  SIGTERM → exit: \(summary(stopMs))")
        printLine("  VmRSS at READY=1: median \(mib(Int(percentile(rssAtReady.map(Double.init).sorted(), 50))))")
        printLine("figure ready.median_ms \(format(readyMedian))")
        printLine("figure ready.p90_ms \(format(readyP90))")
        printLine("\(verdict(readyMedian <= targetMs)) exec → READY=1 median \(format(readyMedian)) ms (p90 \(format(readyP90)) ms), target ≤ \(format(targetMs, 0)) ms")

        let rss = idle.map { $0["VmRSS"] ?? 0 }.sorted()
        let median = rss[rss.count / 2]
        guard let sample = idle.first(where: { $0["VmRSS"] == median }) else { return }
        printLine("rss: idle \(format(idleSeconds, 0)) s after READY=1 (no room, no client), \(idleRuns) runs: VmRSS median \(mib(median)) "
            + "(RssAnon \(mib(sample["RssAnon"] ?? 0)), RssFile \(mib(sample["RssFile"] ?? 0)), VmHWM \(mib(sample["VmHWM"] ?? 0)), "
            + "threads \(sample["Threads"] ?? 0)); all runs: \(rss.map { mib($0) }.joined(separator: ", "))")
        let shown = breakdown.prefix(8)
        let rest = breakdown.dropFirst(8)
        printLine("  where the idle RSS is (/proc/PID/smaps, Rss by mapping): "
            + shown.map { "\($0.name.split(separator: "/").last.map(String.init) ?? $0.name) \(mib($0.kib))" }.joined(separator: ", ")
            + ", \(rest.count) others \(mib(rest.reduce(0) { $0 + $1.kib }))")
        printLine("figure rss.idle_kib \(median)")
        printLine("\(verdict(Double(median) <= targetRSSMiB * 1024)) idle RSS \(mib(median)), target ≤ \(format(targetRSSMiB, 0)) MiB")
    }

    struct Started {
        let pid: pid_t
        let readyMs: Double
        let stopMs: Double
        let rssAtReadyKiB: Int
    }

    static func startDaemon(_ daemon: String, _ args: [String], env: [String], notify: Int32, stderrPath: String,
                            stop: Bool) throws(BenchError) -> Started {
        drain(notify)
        let start = nowNs()
        let pid = try spawn(daemon, args, env: env, stderrPath: stderrPath)
        do {
            try waitForMessage(notify, containing: "READY=1", timeoutMs: 10_000)
        } catch {
            kill(pid, SIGKILL)
            _ = waitExit(pid, timeoutMs: 5000)
            throw BenchError("\(error); see \(stderrPath)")
        }
        let ready = Double(nowNs() - start) / 1e6
        let rss = procStatusKiB(pid: pid)["VmRSS"] ?? 0
        guard stop else { return Started(pid: pid, readyMs: ready, stopMs: 0, rssAtReadyKiB: rss) }
        let stopStart = nowNs()
        kill(pid, SIGTERM)
        guard let status = waitExit(pid, timeoutMs: 10_000) else { throw BenchError("daemon did not stop within 10 s") }
        guard status == 0 else { throw BenchError("daemon exited with wait status \(status); see \(stderrPath)") }
        return Started(pid: pid, readyMs: ready, stopMs: Double(nowNs() - stopStart) / 1e6, rssAtReadyKiB: rss)
    }

    static func timeToExit(_ path: String, _ args: [String], env: [String]) throws(BenchError) -> Double {
        let start = nowNs()
        let pid = try spawn(path, args, env: env, stderrPath: "/dev/null")
        guard waitExit(pid, timeoutMs: 5000) != nil else { throw BenchError("\(path) did not exit") }
        return Double(nowNs() - start) / 1e6
    }

    /// posix_spawn with stdin and stdout on /dev/null and stderr appended to `stderrPath`.
    static func spawn(_ path: String, _ args: [String], env: [String], stderrPath: String) throws(BenchError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let result = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard result == 0 else { throw BenchError("posix_spawn \(path): \(String(cString: strerror(result)))") }
        return pid
    }

    /// The wait status once `pid` exited, or nil after `timeoutMs` (polled every 50 µs).
    static func waitExit(_ pid: pid_t, timeoutMs: Int) -> Int32? {
        let deadline = nowNs() + UInt64(timeoutMs) * 1_000_000
        var status: Int32 = 0
        while nowNs() < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status }
            if result < 0 && errno != EINTR { return nil }
            usleep(50)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
    }

    static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<1000 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 { return }
        }
    }

    static func waitForMessage(_ fd: Int32, containing needle: String, timeoutMs: Int) throws(BenchError) {
        let deadline = nowNs() + UInt64(timeoutMs) * 1_000_000
        var buffer = [UInt8](repeating: 0, count: 4096)
        while nowNs() < deadline {
            let remaining = Int((deadline - min(deadline, nowNs())) / 1_000_000) + 1
            guard waitReadable(fd, timeoutMs: remaining) else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { continue }
            if String(decoding: buffer[0..<count], as: UTF8.self).contains(needle) { return }
        }
        throw BenchError("no \(needle) within \(timeoutMs) ms")
    }

    /// Rss per mapped file (anonymous memory as [anon]), largest first.
    static func rssByMapping(pid: pid_t) -> [(name: String, kib: Int)] {
        var totals: [String: Int] = [:]
        var current = "[anon]"
        for line in readProcFile("/proc/\(pid)/smaps").split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-") && !first.hasSuffix(":") {
                current = fields.count > 5 ? String(fields[5]) : "[anon]"
                if current == "[heap]" || current == "[stack]" { current = "[anon]" }
            } else if first == "Rss:", fields.count > 1, let kib = Int(fields[1]) {
                totals[current, default: 0] += kib
            }
        }
        return totals.map { (name: $0.key, kib: $0.value) }.sorted { $0.kib > $1.kib }
    }

    static func threadCount(pid: pid_t) -> Int {
        let text = readProcFile("/proc/\(pid)/status")
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
