import Foundation
import Runtime
import RuntimeTesting

/// The raw HTTP peer (Peers/http_peer.py) as a subprocess on 127.0.0.1, killed when released.
final class HTTPPeer: @unchecked Sendable {
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/http_peer.py").path

    private let process = Process()
    private let output = Pipe()
    let port: Int

    /// Starts the peer (with TLS when `cert` and `key` are given) and waits, 15 s at most, for its
    /// port. Waits without blocking a thread: the tests beside it run on the same few threads.
    init(cert: String? = nil, key: String? = nil) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", Self.script] + (cert.map { ["--cert", $0, "--key", key ?? ""] } ?? [])
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let received = Received()
        output.fileHandleForReading.readabilityHandler = { handle in received.append(handle.availableData) }
        try process.run()
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while !received.hasLine {
            guard ContinuousClock.now < deadline, process.isRunning else { throw PeerError("the HTTP peer did not start") }
            try await EventLoop.shared.sleep(for: .milliseconds(20))
        }
        output.fileHandleForReading.readabilityHandler = nil
        let text = received.firstLine
        guard text.hasPrefix("READY "), let port = Int(text.dropFirst(6)) else { throw PeerError("bad READY line: \(text)") }
        self.port = port
    }

    /// The peer's output so far, written by the pipe's handler thread.
    private final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []

        func append(_ data: Data) { lock.withLock { bytes += data } }
        var hasLine: Bool { lock.withLock { bytes.contains(UInt8(ascii: "\n")) } }
        var firstLine: String { lock.withLock { String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self) } }
    }

    /// Killed, and gone before this returns (Foundation reaps it): its port is closed.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            TestCommand.waitForEnd(of: process.processIdentifier)
        }
    }
}

struct PeerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A throw-away CA and a certificate for `localhost` it signed, made with the openssl CLI
/// (as the WebSocket TLS tests make theirs), in a temporary folder removed when released.
final class TestCertificates: @unchecked Sendable {
    let directory: URL

    var caFile: String { directory.appendingPathComponent("ca.pem").path }
    var certFile: String { directory.appendingPathComponent("server.pem").path }
    var keyFile: String { directory.appendingPathComponent("server.key").path }

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("http-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=HTTP Test CA"])
        try await openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
        try "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n".write(to: directory.appendingPathComponent("ext.cnf"),
                                                                             atomically: true, encoding: .utf8)
        try await openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"])
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs the openssl CLI in `directory`, on a BlockingCall worker.
    private func openssl(_ arguments: [String]) async throws {
        let outcome = try await TestCommand.run("/usr/bin/env", ["-C", directory.path, "openssl"] + arguments)
        guard outcome.succeeded else { throw PeerError("openssl \(arguments.first ?? "") failed: \(outcome.output)") }
    }
}
