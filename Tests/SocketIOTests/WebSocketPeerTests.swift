import Foundation
import JSONValue
import Runtime
import Testing
@testable import SocketIO

/// Frame-level behaviour against the scripted `websockets` peer (Peers/ws_peer.py).
@Suite(.serialized) @LoopActor struct WebSocketPeerTests {
    static func open(_ peer: PeerProcess, _ path: String, maxMessageBytes: Int = 16 << 20) async throws -> WebSocket {
        try await WebSocket.connect(
            url: "ws://127.0.0.1:\(peer.port)\(path)", headers: ["x-tenant-id": "vtvlive", "os": "linuxstb"],
            timeout: .seconds(5), maxMessageBytes: maxMessageBytes)
    }

    static func receive(_ socket: WebSocket, timeout: Duration = .seconds(5)) async throws -> WebSocketMessage {
        try await withTimeout(timeout, "receive") { try await socket.receive() }
    }

    nonisolated static let violations: [(String, Int, Int)] = [
        ("/bad-utf8", 1007, 16 << 20), ("/reserved-bits", 1002, 16 << 20), ("/unknown-opcode", 1002, 16 << 20), ("/oversized", 1009, 1 << 20),
    ]

    /// `receive()` fails with a protocol violation and the server sees the close code.
    @Test(arguments: violations)
    func violationsAreClosedWithTheirCode(path: String, code: Int, maxMessageBytes: Int) async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, path, maxMessageBytes: maxMessageBytes)
        await #expect {
            _ = try await Self.receive(socket)
        } throws: { error in
            guard case .protocolViolation(let text) = error as? SocketIOError else { return false }
            return text.contains("\(code)")
        }
        let name = String(path.dropFirst())
        let line = try await peer.line(prefix: "RESULT \(name) ")
        #expect(line == "RESULT \(name) \(code)")
    }

    @Test func fragmentedMessagesAreReassembled() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/fragmented")
        #expect(try await Self.receive(socket) == .text("hello world"))
        #expect(try await Self.receive(socket) == .binary([1, 2, 3, 4, 5]))
        socket.close()
        let line = try await peer.line(prefix: "RESULT fragmented ")
        #expect(line == "RESULT fragmented 1000")
    }

    @Test func pingsBetweenFragmentsAreAnswered() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/ping-fragments")
        #expect(try await Self.receive(socket) == .text("one two three"))
        #expect(try await Self.receive(socket) == .text("pongs-ok"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT ping-fragments 1000")
    }

    @Test func sixteenAndSixtyFourBitLengthsBothWays() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/large")
        let big = try await Self.receive(socket)
        let medium = try await Self.receive(socket)
        guard case .binary(let bigBytes) = big, case .binary(let mediumBytes) = medium else {
            Issue.record("not binary")
            return
        }
        #expect(bigBytes.count == 70_000)
        #expect(mediumBytes.count == 300)
        try socket.send(big)
        try socket.send(medium)
        #expect(try await Self.receive(socket) == .text("large-ok"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT large 1000")
    }

    @Test func serverCloseCodeIsEchoed() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/close-code")
        await #expect(throws: SocketIOError.closedByPeer(code: 4001, reason: "bye")) { _ = try await Self.receive(socket) }
        _ = try await peer.line(prefix: "RESULT close-code 4001")
    }

    @Test func clientCloseHandshake() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/client-close")
        socket.close(code: 1001, reason: "going away")
        await #expect(throws: SocketIOError.closedByPeer(code: 1001, reason: "going away")) { _ = try await Self.receive(socket) }
        _ = try await peer.line(prefix: "RESULT client-close 1001 going away")
    }

    @Test func customHeadersReachTheServer() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await Self.open(peer, "/headers")
        guard case .text(let text) = try await Self.receive(socket) else {
            Issue.record("not text")
            return
        }
        let headers = try JSONValue.parse(text)
        #expect(headers["x-tenant-id"] == "vtvlive")
        #expect(headers["os"] == "linuxstb")
        #expect(headers["sec-websocket-version"] == "13")
        socket.close()
    }

    @Test func blackHoledPeerIsDetectedWithinPingIntervalPlusTimeout() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let harness = ClientHarness(SocketIOConfiguration(url: "ws://127.0.0.1:\(peer.port)", reconnect: ReconnectPolicy(baseMs: 5000, capMs: 5000)))
        harness.client.connect()
        _ = try await harness.connected()
        _ = try await peer.line(prefix: "RESULT blackhole-connected 40")
        let state = try await harness.state(timeout: .seconds(5)) { if case .reconnecting = $0 { return true } else { return false } }
        guard case .reconnecting(_, _, let error) = state else {
            Issue.record("unexpected \(state)")
            return
        }
        #expect(error == .heartbeatTimeout)
        // Measured between the client's own log lines (taken when logged), so that the test's
        // scheduling does not count: the CONNECT reply was the peer's last traffic.
        let connected = try await harness.logs.next(timeout: .seconds(1)) { $0.text.contains("connected to") }
        let failed = try await harness.logs.next(timeout: .seconds(1)) { $0.text.contains("no heartbeat") }
        let elapsed = connected.time.duration(to: failed.time)
        // pingInterval 500 ms + pingTimeout 500 ms + 1 s.
        #expect(elapsed <= .seconds(2), "detected after \(elapsed)")
        #expect(elapsed >= .milliseconds(900), "detected too early: \(elapsed)")
        await harness.client.disconnect()
    }

    @Test func eventsInTheSameSegmentAsTheConnectReplyAreKept() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let harness = ClientHarness(SocketIOConfiguration(url: "ws://127.0.0.1:\(peer.port)", path: "/coalesced/"))
        harness.client.connect()
        let sid = try await harness.connected()
        #expect(sid == "co-socket")
        let first = try await harness.event("first")
        let second = try await harness.event("second")
        let third = try await harness.event("third")
        #expect(first.args == [1])
        #expect(second.binary(second.args[0]) == [7, 8])
        #expect(third.args == [3])
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "RESULT coalesced 1000")
    }

    @Test func wsEchoExecutable() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let (status, text) = try await runWsEcho("ws://127.0.0.1:\(peer.port)/echo-check")
        #expect(status == 0, "\(text)")
        #expect(text.contains("code 1000"), "\(text)")
        _ = try await peer.line(prefix: "RESULT echo-check OK")
    }
}
