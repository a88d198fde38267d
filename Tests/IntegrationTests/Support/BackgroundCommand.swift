import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command left running while the test goes on (e.g. `interactivectl events -f`); its output
/// is collected as it comes. Killed when the test lets go of it.
final class BackgroundCommand: @unchecked Sendable {
    private let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private let outLog = LogCollector()
    private let errLog = LogCollector()

    init(_ argv: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        if let environment { process.environment = environment }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let outLog = self.outLog
        let errLog = self.errLog
        out.fileHandleForReading.readabilityHandler = { outLog.append($0.availableData) }
        err.fileHandleForReading.readabilityHandler = { errLog.append($0.availableData) }
        try process.run()
    }

    deinit {
        // SIGKILL, not SIGTERM: children of the test process may inherit SIGTERM blocked. No wait
        // (a deinit cannot suspend): Foundation reaps the child.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
    }

    var stdout: String { outLog.text }
    var stderr: String { errLog.text }

    /// Sends the command a signal (SIGKILL: it dies without a word).
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits (bounded) until `stream` (stdout or stderr) contains `text`.
    func waitFor(_ text: String, in stream: KeyPath<BackgroundCommand, String>, timeoutMs: Int = 10_000) async throws {
        guard try await eventually(timeoutMs: timeoutMs, { self[keyPath: stream].contains(text) }) else {
            throw TestFailure("no '\(text)' within \(timeoutMs) ms\nstdout:\n\(stdout)\nstderr:\n\(stderr)")
        }
    }

    /// Waits (bounded) for the command to end on its own and returns its exit status.
    func waitForExit(timeoutMs: Int = 10_000) async throws -> Int32 {
        guard try await process.exited(withinMs: timeoutMs) else {
            throw TestFailure("still running after \(timeoutMs) ms\nstderr:\n\(stderr)")
        }
        return process.terminationStatus
    }
}
