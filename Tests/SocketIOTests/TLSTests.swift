import Foundation
import JSONValue
import XCTest
@testable import SocketIO

/// TLS verification against peers using a throw-away CA made with the openssl CLI.
final class TLSTests: XCTestCase {
    var directory: URL!
    var peer: PeerProcess!

    func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = directory
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HarnessError("openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        }
    }

    var caFile: String { directory.appendingPathComponent("ca.pem").path }

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sio-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=SIO Test CA"])
        try run(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
        try "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n".write(to: directory.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
        try run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"])
    }

    override func tearDown() async throws {
        peer?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func startWebSocketPeer() async throws {
        peer = try await PeerProcess.start("ws_peer.py", [
            "--cert", directory.appendingPathComponent("server.pem").path,
            "--key", directory.appendingPathComponent("server.key").path,
        ])
    }

    func assertRefused(_ url: String, tls: TLSOptions, containing detail: String) async {
        do {
            let socket = try await WebSocket.connect(url: url, tls: tls, timeout: .seconds(5))
            socket.close()
            XCTFail("\(url) was accepted")
        } catch let error as SocketIOError {
            guard case .tlsVerificationFailed(let reason) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(reason.contains(detail), reason)
        } catch {
            XCTFail("unexpected \(error)")
        }
    }

    func testDefaultVerificationRefusesAnUnknownCA() async throws {
        try await startWebSocketPeer()
        await assertRefused("wss://localhost:\(peer.port)/headers", tls: TLSOptions(), containing: "local issuer")
    }

    func testCAFileIsAccepted() async throws {
        try await startWebSocketPeer()
        let socket = try await WebSocket.connect(url: "wss://localhost:\(peer.port)/headers", tls: TLSOptions(caFile: caFile), timeout: .seconds(5))
        let message = try await withTimeout(.seconds(5), "receive") { try await socket.receive() }
        guard case .text(let text) = message else { return XCTFail("not text") }
        XCTAssertEqual(try JSONValue.parse(text)["host"], .string("localhost:\(peer.port)"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT headers 1000")
    }

    func testWrongHostNameIsRefused() async throws {
        try await startWebSocketPeer()
        await assertRefused("wss://127.0.0.1:\(peer.port)/headers", tls: TLSOptions(caFile: caFile), containing: "mismatch")
    }

    func testInsecureSkipsVerificationAndWarns() async throws {
        try await startWebSocketPeer()
        let warnings = Recorder<String>()
        let socket = try await WebSocket.connect(
            url: "wss://127.0.0.1:\(peer.port)/headers", tls: TLSOptions(insecure: true), timeout: .seconds(5)
        ) { level, message in
            if level == .warning { Task { await warnings.append(message) } }
        }
        _ = try await withTimeout(.seconds(5), "receive") { try await socket.receive() }
        socket.close()
        let warning = try await warnings.next(timeout: .seconds(2)) { _ in true }
        XCTAssertTrue(warning.contains("insecure"), warning)
    }

    func testMissingCAFileIsATLSError() async throws {
        try await startWebSocketPeer()
        do {
            _ = try await WebSocket.connect(url: "wss://localhost:\(peer.port)/headers", tls: TLSOptions(caFile: "/nonexistent/ca.pem"), timeout: .seconds(5))
            XCTFail("accepted")
        } catch let error as SocketIOError {
            guard case .tlsFailed(let reason) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(reason.contains("/nonexistent/ca.pem"), reason)
        }
    }

    func testSocketIOOverTLS() async throws {
        peer = try await PeerProcess.start("sio_server.py", [
            "--cert", directory.appendingPathComponent("server.pem").path,
            "--key", directory.appendingPathComponent("server.key").path,
        ])
        let harness = ClientHarness(SocketIOConfiguration(url: "https://localhost:\(peer.port)", tls: TLSOptions(caFile: caFile)))
        await harness.client.connect()
        _ = try await harness.connected()
        let reply = try await harness.client.emitWithAck("echo", ["secure"], timeout: .seconds(5))
        XCTAssertEqual(reply.args, ["secure"])
        await harness.client.disconnect()
    }
}
