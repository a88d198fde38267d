import Foundation
import JSONValue
import Runtime
import Testing
@testable import SocketIO

/// The client against python-socketio's AsyncServer on aiohttp (Peers/sio_server.py).
@Suite(.serialized) struct SocketIOServerTests {
    static func configuration(_ peer: PeerProcess, namespace: String = "/",
                              reconnect: ReconnectPolicy = ReconnectPolicy(baseMs: 100, capMs: 400)) -> SocketIOConfiguration {
        SocketIOConfiguration(url: "http://127.0.0.1:\(peer.port)", namespace: namespace, reconnect: reconnect, connectTimeout: .seconds(5))
    }

    static let loggedIn = SocketIOCredentials(
        headers: ["x-tenant-id": "onlivev2", "os": "linuxstb", "Authorization": "Bearer abc"],
        auth: ["token": "abc", "userId": "u1"])

    @Test func connectWithAuthAndHeadersKeepsTheEarlyEvent() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer)) { Self.loggedIn }
        await harness.client.connect()
        let sid = try await harness.connected()
        #expect(await harness.client.socketId == sid)
        #expect(await harness.client.isConnected)
        // "welcome" is emitted by the server's connect handler, before its CONNECT reply.
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["headers"] == ["x-tenant-id": "onlivev2", "os": "linuxstb", "authorization": "Bearer abc"])
        #expect(welcome.args.first?["auth"] == ["token": "abc", "userId": "u1"])
        _ = try await peer.line(prefix: "CONNECT \(sid) / abc")
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "DISCONNECT \(sid)")
        #expect(await harness.client.state == .disconnected(.disconnectedByClient))
    }

    @Test func refusalWithObjectDoesNotReconnectUntilAskedTo() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let token = Locked("bad")
        let harness = ClientHarness(Self.configuration(peer)) { SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })]) }
        await harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        #expect(state == .refused(.connectionRefused(message: "authentication failed", data: ["code": "E401"])))
        #expect(await !harness.client.isRunning, "a refused client does not retry by itself")
        _ = try await peer.line(prefix: "REFUSED ")
        // After a new login the application asks for a new attempt.
        token.withLock { $0 = "good" }
        await harness.client.reconnectNow()
        let sid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(sid) / good")
        let refusals = await peer.lines().filter { $0.hasPrefix("REFUSED") }
        #expect(refusals.count == 1, "no retry between the refusal and reconnectNow")
        await harness.client.disconnect()
    }

    @Test func invalidURLStopsAtOnce() async throws {
        let harness = ClientHarness(SocketIOConfiguration(url: "ftp://example.invalid"))
        await harness.client.connect()
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        #expect(state == .disconnected(.invalidURL("ftp://example.invalid")))
        #expect(await !harness.client.isRunning)
    }

    @Test func payloadAboveTheServersMaxPayloadIsRefusedLocally() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        await harness.client.connect()
        _ = try await harness.connected()
        await #expect {
            try await harness.client.emit("echo-event", [.string(String(repeating: "x", count: 1_100_000))])
        } throws: { error in
            guard case .payloadTooLarge(_, let limit) = error as? SocketIOError else { return false }
            return limit == 1_000_000
        }
        let reply = try await harness.client.emitWithAck("echo", ["fine"], timeout: .seconds(5))
        #expect(reply.args == ["fine"])
        await harness.client.disconnect()
    }

    @Test func refusalWithBareStringForAnUnknownNamespace() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer, namespace: "/nope"))
        await harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        #expect(state == .refused(.connectionRefused(message: "Unable to connect", data: nil)))
    }

    @Test func eventsAndAcksBothWaysInANamespace() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer, namespace: "/admin")) { Self.loggedIn }
        await harness.client.connect()
        _ = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT ")
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["namespace"] == "/admin")

        try await harness.client.emit("echo-event", ["a", 1, ["nested": true]])
        let echoed = try await harness.event("echoed")
        #expect(echoed.args == ["a", 1, ["nested": true]])
        #expect(echoed.ackToken == nil)

        let reply = try await harness.client.emitWithAck("echo", [1, "two", nil], timeout: .seconds(5))
        #expect(reply.args == [1, "two", nil])

        try await harness.client.emit("ask-client", [["q": "ping?"]])
        let question = try await harness.event("question")
        #expect(question.args == [["q": "ping?"]])
        let token = try #require(question.ackToken)
        try await harness.client.ack(token, ["pong"])
        let answered = try await harness.event("answered")
        #expect(answered.args == [["answer": "pong"]])
        await harness.client.disconnect()
    }

    @Test func consumerOnTheIOExecutor() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let client = SocketIOClient(configuration: Self.configuration(peer), credentials: { SocketIOCredentials() })
        let received = Task(executorPreference: client.ioExecutor) { () -> [JSONValue] in
            for await event in client.events where event.name == "echoed" {
                // Acks and emits from this executor must work as from any other.
                let reply = try await client.emitWithAck("echo", event.args, timeout: .seconds(5))
                return reply.args
            }
            return []
        }
        await client.connect()
        try await client.emit("echo-event", ["via", "loop"])
        let args = try await withTimeout(.seconds(10), "event on the I/O executor") { try await received.value }
        #expect(args == ["via", "loop"])
        await client.disconnect()
    }

    @Test func ackTimeoutAndCancellationRemoveThePendingAck() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        await harness.client.connect()
        _ = try await harness.connected()
        let started = ContinuousClock.now
        await #expect(throws: SocketIOError.timeout("no ack for no-handler within 300 ms")) {
            try await harness.client.emitWithAck("no-handler", [], timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(await harness.client.pendingAckCount == 0)

        let client = harness.client
        let task = Task { try await client.emitWithAck("no-handler", [], timeout: .seconds(30)) }
        while await client.pendingAckCount == 0 { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) {
            try await withTimeout(.seconds(2), "cancelled ack") { try await task.value }
        }
        #expect(await harness.client.pendingAckCount == 0)
        await harness.client.disconnect()
    }

    @Test func binaryBothWays() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        await harness.client.connect()
        _ = try await harness.connected()

        // Server → client: attachments anywhere in the arguments.
        try await harness.client.emit("send-binary", [])
        let event = try await harness.event("binary")
        let object = try #require(event.args.first)
        #expect(event.binary(try #require(object["blob"])) == Array(0...255))
        #expect(event.binary(try #require(object["nested"]?.arrayValue?.first)) == Array("abc".utf8))
        #expect(event.binary(try #require(object["nested"]?.arrayValue?.last?["deep"])) == [0xFF, 0x00])
        #expect(object["text"] == "plain")

        // Client → server, acked with JSON.
        let inspected = try await harness.client.emitWithAck(
            "inspect-binary", [["files": [SocketIOBinary.placeholder(0), SocketIOBinary.placeholder(1)]]],
            attachments: [[1, 2, 3, 4, 5], [9]], timeout: .seconds(5))
        #expect(inspected.args == [["sizes": [5, 1], "first": [1, 2, 3, 4]]])

        // Client → server → client: a binary ack.
        let echoed = try await harness.client.emitWithAck("echo", [SocketIOBinary.placeholder(0), "x"], attachments: [[0, 255, 7]], timeout: .seconds(5))
        #expect(echoed.binary(echoed.args[0]) == [0, 255, 7])
        #expect(echoed.args[1] == "x")

        // Server asks with binary, the client acks with binary.
        try await harness.client.emit("ask-client-binary", [])
        let question = try await harness.event("question-binary")
        #expect(question.binary(question.args[0]) == [1, 2, 3])
        try await harness.client.ack(try #require(question.ackToken), [SocketIOBinary.placeholder(0)], attachments: [[42, 43]])
        let answered = try await harness.event("answered-binary")
        #expect(answered.binary(answered.args[0]) == [42, 43])
        await harness.client.disconnect()
    }

    @Test func serverDisconnectDoesNotReconnect() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        await harness.client.connect()
        _ = try await harness.connected()
        try await harness.client.emit("kick", [])
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        #expect(state == .disconnected(.disconnectedByServer))
        #expect(await !harness.client.isRunning)
        await #expect(throws: SocketIOError.notConnected) {
            try await harness.client.ack(SocketIOAckToken(id: 1, epoch: 1), [])
        }
    }

    @Test func serverRestartReconnectsOnceWithFreshCredentials() async throws {
        var peer = try await PeerProcess.start("sio_server.py")
        let port = peer.port
        let token = Locked("first")
        let calls = Locked(0)
        let harness = ClientHarness(Self.configuration(peer)) {
            calls.withLock { $0 += 1 }
            return SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })])
        }
        await harness.client.connect()
        let firstSid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(firstSid) / first")

        peer.stop()
        let lost = try await harness.state { if case .reconnecting = $0 { return true } else { return false } }
        guard case .reconnecting(_, _, let error) = lost else {
            Issue.record("\(lost)")
            return
        }
        #expect(error != .heartbeatTimeout, "a killed server is seen at once, not by the heartbeat")
        // A new login while the server is away: the next attempt must carry it.
        token.withLock { $0 = "second" }
        _ = try await harness.state { if case .reconnecting = $0 { return true } else { return false } }

        peer = try await PeerProcess.start("sio_server.py", ["--port", String(port)])
        defer { peer.stop() }
        let secondSid = try await harness.connected()
        #expect(firstSid != secondSid)
        _ = try await peer.line(prefix: "CONNECT \(secondSid) / second")
        let count = try await harness.client.emitWithAck("connections", [], timeout: .seconds(5))
        #expect(count.args == [1], "exactly one connection after the restart")
        let connects = await peer.lines().filter { $0.hasPrefix("CONNECT ") }
        #expect(connects.count == 1)
        #expect(calls.withLock { $0 } >= 3, "credentials are read before every attempt")
        await harness.client.disconnect()
    }

    @Test func reconnectNowClosesTheOldConnectionFirst() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let token = Locked("anonymous")
        let harness = ClientHarness(Self.configuration(peer)) { SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })]) }
        await harness.client.connect()
        let first = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(first) / anonymous")
        token.withLock { $0 = "logged-in" }
        await harness.client.reconnectNow()
        let second = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(second) / logged-in")
        let lines = await peer.lines()
        let disconnectIndex = try #require(lines.firstIndex { $0.hasPrefix("DISCONNECT \(first)") })
        let connectIndex = try #require(lines.firstIndex { $0.hasPrefix("CONNECT \(second)") })
        #expect(disconnectIndex < connectIndex, "never two live connections")
        let count = try await harness.client.emitWithAck("connections", [], timeout: .seconds(5))
        #expect(count.args == [1])
        await harness.client.disconnect()
    }

    @Test func offlineBufferDropsTheOldestAndFailPolicyThrows() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        var config = Self.configuration(peer)
        config.emitBufferLimit = 2
        let harness = ClientHarness(config)
        try await harness.client.emit("echo-event", ["a"])
        try await harness.client.emit("echo-event", ["b"])
        try await harness.client.emit("echo-event", ["c"])
        #expect(await harness.client.droppedEmitCount == 1)
        await #expect(throws: SocketIOError.notConnected) {
            try await harness.client.emit("echo-event", ["d"], whenDisconnected: .fail)
        }
        await harness.client.connect()
        _ = try await harness.connected()
        let first = try await harness.event("echoed")
        let second = try await harness.event("echoed")
        #expect([first.args, second.args] == [["b"], ["c"]])
        let reply = try await harness.client.emitWithAck("echo", ["after"], timeout: .seconds(5))
        #expect(reply.args == ["after"])
        let extra = await harness.events.items.filter { $0.name == "echoed" }.count
        #expect(extra == 2, "the dropped and the refused emits never reach the server")
        await harness.client.disconnect()
    }

    @Test func shortPingIntervalKeepsTheConnection() async throws {
        // python-engineio truncates the interval to whole seconds in its open packet.
        let peer = try await PeerProcess.start("sio_server.py", ["--ping-interval", "1", "--ping-timeout", "1"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        await harness.client.connect()
        let sid = try await harness.connected()
        // Stay through three ping cycles: a client that did not answer pings would be dropped by
        // the server 1 s after the first ping. There is no event to await: the point is that
        // nothing happens, so this waits on purpose.
        try await Task.sleep(for: .seconds(3.5))
        let reply = try await harness.client.emitWithAck("echo", ["still here"], timeout: .seconds(5))
        #expect(reply.args == ["still here"])
        #expect(await harness.client.socketId == sid)
        let states = await harness.states.items
        #expect(!states.contains { if case .reconnecting = $0 { return true } else { return false } }, "\(states)")
        let disconnects = await peer.lines().filter { $0.hasPrefix("DISCONNECT") }
        #expect(disconnects.isEmpty)
        await harness.client.disconnect()
    }
}
