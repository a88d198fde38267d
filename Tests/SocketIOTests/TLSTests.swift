import Foundation
import JSONValue
import Runtime
import RuntimeTesting
import Testing
@testable import SocketIO

/// TLS verification against peers using a throw-away CA made with the openssl CLI.
@Suite(.serialized) @LoopActor struct TLSTests {
    /// A directory with a CA and a certificate for "localhost" signed by it.
    final class Certificates: Sendable {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sio-tls-\(UUID().uuidString)")
        var caFile: String { directory.appendingPathComponent("ca.pem").path }
        var serverArguments: [String] {
            ["--cert", directory.appendingPathComponent("server.pem").path, "--key", directory.appendingPathComponent("server.key").path]
        }

        init() async throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
            try await run(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=SIO Test CA"])
            try await run(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
            try "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n".write(to: directory.appendingPathComponent("ext.cnf"), atomically: true, encoding: .utf8)
            try await run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"])
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// Runs the openssl CLI in `directory`, on a BlockingCall worker (not the loop).
        private func run(_ arguments: [String]) async throws {
            let outcome = try await TestCommand.run("/usr/bin/env", ["-C", directory.path, "openssl"] + arguments)
            guard outcome.succeeded else { throw HarnessError("openssl \(arguments.joined(separator: " ")) failed: \(outcome.output)") }
        }
    }

    func expectRefused(_ url: String, tls: TLSOptions, containing detail: String) async {
        do {
            let socket = try await WebSocket.connect(url: url, tls: tls, timeout: .seconds(5))
            socket.close()
            Issue.record("\(url) was accepted")
        } catch let error as SocketIOError {
            guard case .tlsVerificationFailed(let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains(detail), "\(reason)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func defaultVerificationRefusesAnUnknownCA() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("ws_peer.py", certificates.serverArguments)
        defer { peer.stop() }
        await expectRefused("wss://localhost:\(peer.port)/headers", tls: TLSOptions(), containing: "local issuer")
    }

    @Test func caFileIsAccepted() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("ws_peer.py", certificates.serverArguments)
        defer { peer.stop() }
        let socket = try await WebSocket.connect(url: "wss://localhost:\(peer.port)/headers", tls: TLSOptions(caFile: certificates.caFile), timeout: .seconds(5))
        let message = try await withTimeout(.seconds(5), "receive") { try await socket.receive() }
        guard case .text(let text) = message else {
            Issue.record("not text")
            return
        }
        #expect(try JSONValue.parse(text)["host"] == .string("localhost:\(peer.port)"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT headers 1000")
    }

    @Test func wrongHostNameIsRefused() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("ws_peer.py", certificates.serverArguments)
        defer { peer.stop() }
        await expectRefused("wss://127.0.0.1:\(peer.port)/headers", tls: TLSOptions(caFile: certificates.caFile), containing: "mismatch")
    }

    @Test func insecureSkipsVerificationAndWarns() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("ws_peer.py", certificates.serverArguments)
        defer { peer.stop() }
        let warnings = Recorder<String>()
        let socket = try await WebSocket.connect(
            url: "wss://127.0.0.1:\(peer.port)/headers", tls: TLSOptions(insecure: true), timeout: .seconds(5)
        ) { level, message in
            if level == .warning { EventLoop.shared.execute { warnings.append(message) } }
        }
        _ = try await withTimeout(.seconds(5), "receive") { try await socket.receive() }
        socket.close()
        let warning = try await warnings.next(timeout: .seconds(2)) { _ in true }
        #expect(warning.contains("insecure"), "\(warning)")
    }

    @Test func missingCAFileIsATLSError() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("ws_peer.py", certificates.serverArguments)
        defer { peer.stop() }
        await #expect {
            _ = try await WebSocket.connect(url: "wss://localhost:\(peer.port)/headers", tls: TLSOptions(caFile: "/nonexistent/ca.pem"), timeout: .seconds(5))
        } throws: { error in
            guard case .tlsFailed(let reason) = error as? SocketIOError else { return false }
            return reason.contains("/nonexistent/ca.pem")
        }
    }

    @Test func socketIOOverTLS() async throws {
        let certificates = try await Certificates()
        let peer = try await PeerProcess.start("sio_server.py", certificates.serverArguments)
        defer { peer.stop() }
        let harness = ClientHarness(SocketIOConfiguration(url: "https://localhost:\(peer.port)", tls: TLSOptions(caFile: certificates.caFile)))
        harness.client.connect()
        _ = try await harness.connected()
        let reply = try await harness.client.emitWithAck("echo", ["secure"], timeout: .seconds(5))
        #expect(reply.args == ["secure"])
        await harness.client.disconnect()
    }
}
