import Foundation
import JSONValue
import Runtime
import Testing
@testable import SocketIO

/// The client against python-socketio's AsyncServer on aiohttp (Peers/sio_server.py).
@Suite(.serialized) @LoopActor struct SocketIOServerTests {
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
        harness.client.connect()
        let sid = try await harness.connected()
        #expect(harness.client.socketId == sid)
        #expect(harness.client.isConnected)
        // "welcome" is emitted by the server's connect handler, before its CONNECT reply.
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["headers"] == ["x-tenant-id": "onlivev2", "os": "linuxstb", "authorization": "Bearer abc"])
        #expect(welcome.args.first?["auth"] == ["token": "abc", "userId": "u1"])
        _ = try await peer.line(prefix: "CONNECT \(sid) / abc")
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "DISCONNECT \(sid)")
        #expect(harness.client.state == .disconnected(.disconnectedByClient))
    }

    @Test func refusalWithObjectDoesNotReconnectUntilAskedTo() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let token = Locked("bad")
        let harness = ClientHarness(Self.configuration(peer)) { SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })]) }
        harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        #expect(state == .refused(.connectionRefused(message: "authentication failed", data: ["code": "E401"])))
        #expect(!harness.client.isRunning, "a refused client does not retry by itself")
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
        harness.client.connect()
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        #expect(state == .disconnected(.invalidURL("ftp://example.invalid")))
        #expect(!harness.client.isRunning)
    }

    @Test func payloadAboveTheServersMaxPayloadIsRefusedLocally() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        _ = try await harness.connected()
        #expect {
            try harness.client.emit("echo-event", [.string(String(repeating: "x", count: 1_100_000))])
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
        harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        #expect(state == .refused(.connectionRefused(message: "Unable to connect", data: nil)))
    }

    @Test func eventsAndAcksBothWaysInANamespace() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer, namespace: "/admin")) { Self.loggedIn }
        harness.client.connect()
        _ = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT ")
        let welcome = try await harness.event("welcome")
        #expect(welcome.args.first?["namespace"] == "/admin")

        try harness.client.emit("echo-event", ["a", 1, ["nested": true]])
        let echoed = try await harness.event("echoed")
        #expect(echoed.args == ["a", 1, ["nested": true]])
        #expect(echoed.ackToken == nil)

        let reply = try await harness.client.emitWithAck("echo", [1, "two", nil], timeout: .seconds(5))
        #expect(reply.args == [1, "two", nil])

        try harness.client.emit("ask-client", [["q": "ping?"]])
        let question = try await harness.event("question")
        #expect(question.args == [["q": "ping?"]])
        let token = try #require(question.ackToken)
        try harness.client.ack(token, ["pong"])
        let answered = try await harness.event("answered")
        #expect(answered.args == [["answer": "pong"]])
        await harness.client.disconnect()
    }

    /// Events reach the handler on the loop as they are decoded; an ack or an emit made from it
    /// goes out at once.
    @Test func theHandlerRunsOnTheLoopAndMayEmit() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let replies = Recorder<JSONValue>()
        var client: SocketIOClient?
        client = SocketIOClient(configuration: Self.configuration(peer), credentials: { SocketIOCredentials() }) { update in
            guard case .event(let event) = update, event.name == "echoed" else { return }
            #expect(EventLoop.shared.inLoop)
            _ = try? client?.emitWithAck("echo", event.args, timeout: .seconds(5)) { result in
                if case .success(let reply) = result { replies.append(.array(reply.args)) }
            }
        }
        let connected = try #require(client)
        connected.connect()
        try connected.emit("echo-event", ["via", "loop"])
        #expect(try await replies.next(timeout: .seconds(10)) { _ in true } == ["via", "loop"])
        await connected.disconnect()
    }

    /// The heartbeat proves what reached python-socketio: its second ping after an emit proves it.
    @Test func pingsProveWhatReachedTheServer() async throws {
        let peer = try await PeerProcess.start("sio_server.py", ["--ping-interval", "1", "--ping-timeout", "1"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        _ = try await harness.connected()
        let emitted = try #require(try harness.client.emit("echo-event", ["proved"], whenDisconnected: .fail))
        let proof = try await harness.carried.next(timeout: .seconds(10)) { $0.covers(emitted) }
        #expect(proof.connection == emitted.connection)
        await harness.client.disconnect()
    }

    @Test func ackTimeoutAndCancellationRemoveThePendingAck() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        _ = try await harness.connected()
        let started = ContinuousClock.now
        await #expect(throws: SocketIOError.timeout("no ack for no-handler within 300 ms")) {
            try await harness.client.emitWithAck("no-handler", [], timeout: .milliseconds(300))
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(harness.client.pendingAckCount == 0)

        let client = harness.client
        let task = Task { try await client.emitWithAck("no-handler", [], timeout: .seconds(30)) }
        while client.pendingAckCount == 0 { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) {
            try await withTimeout(.seconds(2), "cancelled ack") { try await task.value }
        }
        #expect(harness.client.pendingAckCount == 0)
        await harness.client.disconnect()
    }

    @Test func binaryBothWays() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        _ = try await harness.connected()

        // Server → client: attachments anywhere in the arguments.
        try harness.client.emit("send-binary", [])
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
        try harness.client.emit("ask-client-binary", [])
        let question = try await harness.event("question-binary")
        #expect(question.binary(question.args[0]) == [1, 2, 3])
        try harness.client.ack(try #require(question.ackToken), [SocketIOBinary.placeholder(0)], attachments: [[42, 43]])
        let answered = try await harness.event("answered-binary")
        #expect(answered.binary(answered.args[0]) == [42, 43])
        await harness.client.disconnect()
    }

    @Test func serverDisconnectDoesNotReconnect() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        _ = try await harness.connected()
        try harness.client.emit("kick", [])
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        #expect(state == .disconnected(.disconnectedByServer))
        #expect(!harness.client.isRunning)
        #expect(throws: SocketIOError.notConnected) {
            try harness.client.ack(SocketIOAckToken(id: 1, epoch: 1), [])
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
        harness.client.connect()
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
        harness.client.connect()
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
        try harness.client.emit("echo-event", ["a"])
        try harness.client.emit("echo-event", ["b"])
        try harness.client.emit("echo-event", ["c"])
        #expect(harness.client.droppedEmitCount == 1)
        #expect(throws: SocketIOError.notConnected) {
            try harness.client.emit("echo-event", ["d"], whenDisconnected: .fail)
        }
        harness.client.connect()
        _ = try await harness.connected()
        let first = try await harness.event("echoed")
        let second = try await harness.event("echoed")
        #expect([first.args, second.args] == [["b"], ["c"]])
        let reply = try await harness.client.emitWithAck("echo", ["after"], timeout: .seconds(5))
        #expect(reply.args == ["after"])
        let extra = harness.events.items.filter { $0.name == "echoed" }.count
        #expect(extra == 2, "the dropped and the refused emits never reach the server")
        await harness.client.disconnect()
    }

    @Test func shortPingIntervalKeepsTheConnection() async throws {
        // python-engineio truncates the interval to whole seconds in its open packet.
        let peer = try await PeerProcess.start("sio_server.py", ["--ping-interval", "1", "--ping-timeout", "1"])
        defer { peer.stop() }
        let harness = ClientHarness(Self.configuration(peer))
        harness.client.connect()
        let sid = try await harness.connected()
        // Stay through three ping cycles: a client that did not answer pings would be dropped by
        // the server 1 s after the first ping. There is no event to await: the point is that
        // nothing happens, so this waits on purpose.
        try await Task.sleep(for: .seconds(3.5))
        let reply = try await harness.client.emitWithAck("echo", ["still here"], timeout: .seconds(5))
        #expect(reply.args == ["still here"])
        #expect(harness.client.socketId == sid)
        let states = harness.states.items
        #expect(!states.contains { if case .reconnecting = $0 { return true } else { return false } }, "\(states)")
        let disconnects = await peer.lines().filter { $0.hasPrefix("DISCONNECT") }
        #expect(disconnects.isEmpty)
        await harness.client.disconnect()
    }
}
