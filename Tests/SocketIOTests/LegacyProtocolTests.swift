import Runtime
import Foundation
import JSONValue
import Testing
@testable import SocketIO

/// The v2 protocol option (Engine.IO 3, Socket.IO protocol 4) against python-socketio-v4 /
/// python-engineio-v3 (Peers/sio_server.py --legacy).
@Suite(.serialized) @LoopActor struct LegacyProtocolTests {
    static func configuration(_ peer: PeerProcess) -> SocketIOConfiguration {
        SocketIOConfiguration(url: "ws://127.0.0.1:\(peer.port)", protocolVersion: .v2,
                              reconnect: ReconnectPolicy(baseMs: 100, capMs: 400), connectTimeout: .seconds(5))
    }

    @Test func queryTokenEventsAcksAndBinary() async throws {
        let peer = try await PeerProcess.start("sio_server.py", ["--legacy"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer)) {
            SocketIOCredentials(headers: ["x-tenant-id": "vtvlive"], auth: ["token": "abc", "userId": "u1"])
        }
        harness.client.connect()
        let sid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(sid) / abc")  // the Engine.IO sid is the socket id
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["token"] == "abc")
        #expect(welcome.args.first?["headers"]?["x-tenant-id"] == "vtvlive")

        let reply = try await harness.client.emitWithAck("echo", ["v2", 2], timeout: .seconds(5))
        #expect(reply.args == ["v2", 2])

        try harness.client.emit("send-binary", [])
        let binary = try await harness.event("binary")
        #expect(binary.binary(try #require(binary.args.first?["blob"])) == Array(0...255))

        let echoed = try await harness.client.emitWithAck("echo", [SocketIOBinary.placeholder(0)], attachments: [[5, 6]], timeout: .seconds(5))
        #expect(echoed.binary(echoed.args[0]) == [5, 6])

        try harness.client.emit("ask-client", [["q": 1]])
        let question = try await harness.event("question")
        try harness.client.ack(try #require(question.ackToken), ["yes"])
        let answered = try await harness.event("answered")
        #expect(answered.args == [["answer": "yes"]])
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "DISCONNECT \(sid)")
    }

    @Test func namespaceIsJoinedAfterTheDefaultOne() async throws {
        let peer = try await PeerProcess.start("sio_server.py", ["--legacy"])
        defer { peer.stop() }
        var config = Self.configuration(peer)
        config.namespace = "/admin"
        let harness = ClientHarness(config) { SocketIOCredentials(auth: ["token": "abc"]) }
        harness.client.connect()
        let sid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(sid) /admin abc")
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["namespace"] == "/admin")
        let reply = try await harness.client.emitWithAck("echo", ["in admin"], timeout: .seconds(5))
        #expect(reply.args == ["in admin"])
        await harness.client.disconnect()
    }

    @Test func refusedTokenIsARefusal() async throws {
        let peer = try await PeerProcess.start("sio_server.py", ["--legacy"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer)) { SocketIOCredentials(auth: ["token": "bad"]) }
        harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        guard case .refused(.connectionRefused) = state else {
            Issue.record("\(state)")
            return
        }
        #expect(!harness.client.isRunning)
    }

    @Test func clientSidePingsKeepTheConnection() async throws {
        let peer = try await PeerProcess.start("sio_server.py", ["--legacy", "--ping-interval", "1", "--ping-timeout", "2"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        let sid = try await harness.connected()
        // The Engine.IO 3 server closes a WebSocket that stays silent for pingTimeout (2 s); only the
        // client's pings (every 1 s) keep it open. Stay for 3.5 s: nothing is expected to happen,
        // so this waits on purpose.
        try await Task.sleep(for: .seconds(3.5))
        let reply = try await harness.client.emitWithAck("echo", ["alive"], timeout: .seconds(5))
        #expect(reply.args == ["alive"])
        #expect(harness.client.socketId == sid)
        let disconnects = await peer.lines().filter { $0.hasPrefix("DISCONNECT") }
        let states = harness.states.items
        #expect(disconnects.isEmpty, "\(disconnects) \(states)")
        await harness.client.disconnect()
    }
}
