import Foundation
import IPCProtocol
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// Where the package's built executables are (next to the test bundle).
enum BuiltProducts {
    static var directory: URL {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        var folder = executable.deletingLastPathComponent()
        // On Linux the test binary sits in the build folder itself (…/debug/xPackageTests.xctest).
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("interactived").path),
              folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder
    }

    static var daemon: String { directory.appendingPathComponent("interactived").path }
    static var ctl: String { directory.appendingPathComponent("interactivectl").path }
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A temporary folder removed when the test ends.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        // Short paths: Unix socket paths are limited to 107 bytes. World-readable so that an
        // observer test running as nobody can reach the socket.
        let template = "/tmp/ictest-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw TestFailure("mkdtemp failed") }
        path = String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(path, 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The real `interactived` binary, started on a temporary socket and state directory.
final class DaemonProcess: @unchecked Sendable {
    let directory: TemporaryDirectory
    let socketPath: String
    let stateDirectory: String
    let notify: NotifySocket
    let process = Process()
    private let stderrPipe = Pipe()
    private let stderrLog = LogCollector()

    /// Starts the daemon and waits for READY=1 on the test's NOTIFY_SOCKET. `launcher` is a
    /// command that runs the daemon (its path and arguments follow), e.g. one that enters a cgroup
    /// or `ip netns exec NAMESPACE`.
    init(arguments: [String] = [], config: JSONValue? = nil, environment extra: [String: String] = [:],
         directory: TemporaryDirectory? = nil, waitReady: Bool = true, launcher: [String] = []) async throws {
        self.directory = try directory ?? TemporaryDirectory()
        socketPath = self.directory.path + "/d.sock"
        stateDirectory = self.directory.path + "/state"
        notify = try NotifySocket(directory: self.directory.path)
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment.removeValue(forKey: "JOURNAL_STREAM")
        environment.removeValue(forKey: "LISTEN_FDS")
        environment.removeValue(forKey: "WATCHDOG_USEC")
        environment.removeValue(forKey: "WATCHDOG_PID")
        environment.removeValue(forKey: "INTERACTIVED_SOCKET")
        for (key, value) in extra { environment[key] = value }
        var args = ["--socket", socketPath, "--state-directory", stateDirectory, "--log-target", "stderr"]
        let configPath = self.directory.path + "/config.json"
        if let config {
            try Data(config.serialized()).write(to: URL(fileURLWithPath: configPath))
        }
        args += ["--config", configPath]
        args += arguments
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = Array(launcher.dropFirst()) + [BuiltProducts.daemon] + args
        } else {
            process.executableURL = URL(fileURLWithPath: BuiltProducts.daemon)
            process.arguments = args
        }
        process.environment = environment
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        let collector = stderrLog
        stderrPipe.fileHandleForReading.readabilityHandler = { handle in collector.append(handle.availableData) }
        try process.run()
        if waitReady {
            do {
                try await notify.waitFor("READY=1")
            } catch {
                throw TestFailure("daemon not ready: \(error)\nstderr:\n\(stderr)")
            }
        }
    }

    deinit {
        // SIGKILL without waiting (a deinit cannot suspend): Foundation reaps the child.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
    }

    /// What the daemon wrote to stderr so far.
    var stderr: String { stderrLog.text }

    /// Waits (bounded) until the daemon's stderr contains `text`; stderr arrives through a pipe,
    /// a little after the daemon wrote it.
    func waitForLog(_ text: String, timeoutMs: Int = 5000) async throws -> Bool {
        try await eventually(timeoutMs: timeoutMs) { stderr.contains(text) }
    }

    /// The processes the daemon started and has not reaped yet (its media process).
    var children: [Int32] {
        let taskFolder = "/proc/\(process.processIdentifier)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: taskFolder)) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "\(taskFolder)/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// A new connection to its local socket.
    func client() async throws -> DaemonConnection { try await DaemonConnection.connect(path: socketPath) }

    /// `count` new connections to its local socket, opened one after another.
    func clients(_ count: Int) async throws -> [DaemonConnection] {
        var clients: [DaemonConnection] = []
        for _ in 0..<count { clients.append(try await client()) }
        return clients
    }

    /// Sends a signal and, for SIGTERM/SIGINT, waits for the exit (bounded).
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    @discardableResult
    func stop(timeoutMs: Int = 10_000) async throws -> Int32 {
        signal(SIGTERM)
        return try await waitForExit(timeoutMs: timeoutMs)
    }

    func waitForExit(timeoutMs: Int = 10_000) async throws -> Int32 {
        guard try await process.exited(withinMs: timeoutMs) else {
            throw TestFailure("daemon did not exit within \(timeoutMs) ms")
        }
        return process.terminationStatus
    }

    /// Runs interactivectl against this daemon; returns (status, stdout, stderr).
    func ctl(_ arguments: [String], stdin: String? = nil, prefix: [String] = []) async throws -> CommandResult {
        try await runCommand(prefix + [BuiltProducts.ctl, "--socket", socketPath] + arguments, stdin: stdin)
    }
}

struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a command to completion (bounded) and captures its output.
func runCommand(_ argv: [String], stdin: String? = nil, environment: [String: String]? = nil,
                timeoutMs: Int = 30_000) async throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: argv[0].hasPrefix("/") ? argv[0] : "/usr/bin/env")
    process.arguments = argv[0].hasPrefix("/") ? Array(argv.dropFirst()) : argv
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(timeoutMs))
    let command = argv.joined(separator: " ")
    try process.run()
    // Read while it runs, so a full pipe never stops it.
    async let output = readToEnd(out.fileHandleForReading, of: command, until: deadline)
    async let errors = readToEnd(err.fileHandleForReading, of: command, until: deadline)
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    guard try await process.exited(withinMs: timeoutMs) else {
        process.terminate()
        throw TestFailure("\(command) did not finish within \(timeoutMs) ms")
    }
    return CommandResult(status: process.terminationStatus, stdout: String(decoding: try await output, as: UTF8.self),
                         stderr: String(decoding: try await errors, as: UTF8.self))
}
