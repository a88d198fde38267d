import Foundation
import JSONValue
import XCTest
@testable import SocketIO

/// The client against python-socketio's AsyncServer on aiohttp (Peers/sio_server.py).
final class SocketIOServerTests: XCTestCase {
    var peer: PeerProcess!

    override func tearDown() async throws {
        peer?.stop()
    }

    func start(_ arguments: [String] = []) async throws {
        peer = try await PeerProcess.start("sio_server.py", arguments)
    }

    func configuration(namespace: String = "/", reconnect: ReconnectPolicy = ReconnectPolicy(baseMs: 100, capMs: 400)) -> SocketIOConfiguration {
        SocketIOConfiguration(url: "http://127.0.0.1:\(peer.port)", namespace: namespace, reconnect: reconnect, connectTimeout: .seconds(5))
    }

    static let loggedIn = SocketIOCredentials(
        headers: ["x-tenant-id": "onlivev2", "os": "linuxstb", "Authorization": "Bearer abc"],
        auth: ["token": "abc", "userId": "u1"])

    func testConnectWithAuthAndHeadersKeepsTheEarlyEvent() async throws {
        try await start()
        let harness = ClientHarness(configuration()) { Self.loggedIn }
        await harness.client.connect()
        let sid = try await harness.connected()
        let socketId = await harness.client.socketId
        let isConnected = await harness.client.isConnected
        XCTAssertEqual(socketId, sid)
        XCTAssertTrue(isConnected)
        // "welcome" is emitted by the server's connect handler, before its CONNECT reply.
        let welcome = try await harness.event("welcome")
        XCTAssertEqual(welcome.args.first?["headers"], ["x-tenant-id": "onlivev2", "os": "linuxstb", "authorization": "Bearer abc"])
        XCTAssertEqual(welcome.args.first?["auth"], ["token": "abc", "userId": "u1"])
        _ = try await peer.line(prefix: "CONNECT \(sid) / abc")
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "DISCONNECT \(sid)")
        let final = await harness.client.state
        XCTAssertEqual(final, .disconnected(.disconnectedByClient))
    }

    func testRefusalWithObjectDoesNotReconnectUntilAskedTo() async throws {
        try await start()
        let token = Locked("bad")
        let harness = ClientHarness(configuration()) { SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })]) }
        await harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        XCTAssertEqual(state, .refused(.connectionRefused(message: "authentication failed", data: ["code": "E401"])))
        let running = await harness.client.isRunning
        XCTAssertFalse(running, "a refused client does not retry by itself")
        _ = try await peer.line(prefix: "REFUSED ")
        // After a new login the application asks for a new attempt.
        token.withLock { $0 = "good" }
        await harness.client.reconnectNow()
        let sid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(sid) / good")
        let refusals = await peer.lines().filter { $0.hasPrefix("REFUSED") }
        XCTAssertEqual(refusals.count, 1, "no retry between the refusal and reconnectNow")
        await harness.client.disconnect()
    }

    func testInvalidURLStopsAtOnce() async throws {
        let harness = ClientHarness(SocketIOConfiguration(url: "ftp://example.invalid"))
        await harness.client.connect()
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        XCTAssertEqual(state, .disconnected(.invalidURL("ftp://example.invalid")))
        let running = await harness.client.isRunning
        XCTAssertFalse(running)
    }

    func testPayloadAboveTheServersMaxPayloadIsRefusedLocally() async throws {
        try await start()
        let harness = ClientHarness(configuration())
        await harness.client.connect()
        _ = try await harness.connected()
        do {
            try await harness.client.emit("echo-event", [.string(String(repeating: "x", count: 1_100_000))])
            XCTFail("sent a packet above maxPayload")
        } catch let error as SocketIOError {
            guard case .payloadTooLarge(_, let limit) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertEqual(limit, 1_000_000)
        }
        let reply = try await harness.client.emitWithAck("echo", ["fine"], timeout: .seconds(5))
        XCTAssertEqual(reply.args, ["fine"])
        await harness.client.disconnect()
    }

    func testRefusalWithBareStringForAnUnknownNamespace() async throws {
        try await start()
        let harness = ClientHarness(configuration(namespace: "/nope"))
        await harness.client.connect()
        let state = try await harness.state { if case .refused = $0 { return true } else { return false } }
        XCTAssertEqual(state, .refused(.connectionRefused(message: "Unable to connect", data: nil)))
    }

    func testEventsAndAcksBothWaysInANamespace() async throws {
        try await start()
        let harness = ClientHarness(configuration(namespace: "/admin")) { Self.loggedIn }
        await harness.client.connect()
        _ = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT ")
        let welcome = try await harness.event("welcome")
        XCTAssertEqual(welcome.args.first?["namespace"], "/admin")

        try await harness.client.emit("echo-event", ["a", 1, ["nested": true]])
        let echoed = try await harness.event("echoed")
        XCTAssertEqual(echoed.args, ["a", 1, ["nested": true]])
        XCTAssertNil(echoed.ackToken)

        let reply = try await harness.client.emitWithAck("echo", [1, "two", nil], timeout: .seconds(5))
        XCTAssertEqual(reply.args, [1, "two", nil])

        try await harness.client.emit("ask-client", [["q": "ping?"]])
        let question = try await harness.event("question")
        XCTAssertEqual(question.args, [["q": "ping?"]])
        let token = try XCTUnwrap(question.ackToken)
        try await harness.client.ack(token, ["pong"])
        let answered = try await harness.event("answered")
        XCTAssertEqual(answered.args, [["answer": "pong"]])
        await harness.client.disconnect()
    }

    func testConsumerOnTheIOExecutor() async throws {
        try await start()
        let client = SocketIOClient(configuration: configuration(), credentials: { SocketIOCredentials() })
        let received = Task(executorPreference: client.ioExecutor) { () -> [JSONValue] in
            for await event in client.events where event.name == "echoed" {
                // Acks and emits from this executor must work as from any other.
                let reply = try await client.emitWithAck("echo", event.args, timeout: .seconds(5))
                return reply.args
            }
            return []
        }
        await client.connect()
        try await client.emit("echo-event", ["via", "reactor"])
        let args = try await withTimeout(.seconds(10), "event on the I/O executor") { try await received.value }
        XCTAssertEqual(args, ["via", "reactor"])
        await client.disconnect()
    }

    func testAckTimeoutAndCancellationRemoveThePendingAck() async throws {
        try await start()
        let harness = ClientHarness(configuration())
        await harness.client.connect()
        _ = try await harness.connected()
        let started = ContinuousClock.now
        do {
            _ = try await harness.client.emitWithAck("no-handler", [], timeout: .milliseconds(300))
            XCTFail("acked")
        } catch let error as SocketIOError {
            guard case .timeout = error else { return XCTFail("unexpected \(error)") }
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2))
        var pending = await harness.client.pendingAckCount
        XCTAssertEqual(pending, 0)

        let client = harness.client
        let task = Task { try await client.emitWithAck("no-handler", [], timeout: .seconds(30)) }
        while await client.pendingAckCount == 0 { await Task.yield() }
        task.cancel()
        do {
            _ = try await withTimeout(.seconds(2), "cancelled ack") { try await task.value }
            XCTFail("acked")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        pending = await harness.client.pendingAckCount
        XCTAssertEqual(pending, 0)
        await harness.client.disconnect()
    }

    func testBinaryBothWays() async throws {
        try await start()
        let harness = ClientHarness(configuration())
        await harness.client.connect()
        _ = try await harness.connected()

        // Server → client: attachments anywhere in the arguments.
        try await harness.client.emit("send-binary", [])
        let event = try await harness.event("binary")
        let object = try XCTUnwrap(event.args.first)
        XCTAssertEqual(event.binary(try XCTUnwrap(object["blob"])), Array(0...255))
        XCTAssertEqual(event.binary(try XCTUnwrap(object["nested"]?.arrayValue?.first)), Array("abc".utf8))
        XCTAssertEqual(event.binary(try XCTUnwrap(object["nested"]?.arrayValue?.last?["deep"])), [0xFF, 0x00])
        XCTAssertEqual(object["text"], "plain")

        // Client → server, acked with JSON.
        let inspected = try await harness.client.emitWithAck(
            "inspect-binary", [["files": [SocketIOBinary.placeholder(0), SocketIOBinary.placeholder(1)]]],
            attachments: [[1, 2, 3, 4, 5], [9]], timeout: .seconds(5))
        XCTAssertEqual(inspected.args, [["sizes": [5, 1], "first": [1, 2, 3, 4]]])

        // Client → server → client: a binary ack.
        let echoed = try await harness.client.emitWithAck("echo", [SocketIOBinary.placeholder(0), "x"], attachments: [[0, 255, 7]], timeout: .seconds(5))
        XCTAssertEqual(echoed.binary(echoed.args[0]), [0, 255, 7])
        XCTAssertEqual(echoed.args[1], "x")

        // Server asks with binary, the client acks with binary.
        try await harness.client.emit("ask-client-binary", [])
        let question = try await harness.event("question-binary")
        XCTAssertEqual(question.binary(question.args[0]), [1, 2, 3])
        try await harness.client.ack(try XCTUnwrap(question.ackToken), [SocketIOBinary.placeholder(0)], attachments: [[42, 43]])
        let answered = try await harness.event("answered-binary")
        XCTAssertEqual(answered.binary(answered.args[0]), [42, 43])
        await harness.client.disconnect()
    }

    func testServerDisconnectDoesNotReconnect() async throws {
        try await start()
        let harness = ClientHarness(configuration())
        await harness.client.connect()
        _ = try await harness.connected()
        try await harness.client.emit("kick", [])
        let state = try await harness.state { if case .disconnected = $0 { return true } else { return false } }
        XCTAssertEqual(state, .disconnected(.disconnectedByServer))
        let running = await harness.client.isRunning
        XCTAssertFalse(running)
        do {
            try await harness.client.ack(SocketIOAckToken(id: 1, epoch: 1), [])
            XCTFail("acked without a connection")
        } catch {
            XCTAssertEqual(error as? SocketIOError, .notConnected)
        }
    }

    func testServerRestartReconnectsOnceWithFreshCredentials() async throws {
        try await start()
        let port = peer.port
        let token = Locked("first")
        let calls = Locked(0)
        let harness = ClientHarness(configuration()) {
            calls.withLock { $0 += 1 }
            return SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })])
        }
        await harness.client.connect()
        let firstSid = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(firstSid) / first")

        peer.stop()
        let lost = try await harness.state { if case .reconnecting = $0 { return true } else { return false } }
        guard case .reconnecting(_, _, let error) = lost else { return XCTFail("\(lost)") }
        XCTAssertNotEqual(error, .heartbeatTimeout, "a killed server is seen at once, not by the heartbeat")
        // A new login while the server is away: the next attempt must carry it.
        token.withLock { $0 = "second" }
        _ = try await harness.state { if case .reconnecting = $0 { return true } else { return false } }

        peer = try await PeerProcess.start("sio_server.py", ["--port", String(port)])
        let secondSid = try await harness.connected()
        XCTAssertNotEqual(firstSid, secondSid)
        _ = try await peer.line(prefix: "CONNECT \(secondSid) / second")
        let count = try await harness.client.emitWithAck("connections", [], timeout: .seconds(5))
        XCTAssertEqual(count.args, [1], "exactly one connection after the restart")
        let connects = await peer.lines().filter { $0.hasPrefix("CONNECT ") }
        XCTAssertEqual(connects.count, 1)
        XCTAssertGreaterThanOrEqual(calls.withLock { $0 }, 3, "credentials are read before every attempt")
        await harness.client.disconnect()
    }

    func testReconnectNowClosesTheOldConnectionFirst() async throws {
        try await start()
        let token = Locked("anonymous")
        let harness = ClientHarness(configuration()) { SocketIOCredentials(auth: ["token": .string(token.withLock { $0 })]) }
        await harness.client.connect()
        let first = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(first) / anonymous")
        token.withLock { $0 = "logged-in" }
        await harness.client.reconnectNow()
        let second = try await harness.connected()
        _ = try await peer.line(prefix: "CONNECT \(second) / logged-in")
        let lines = await peer.lines()
        let disconnectIndex = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("DISCONNECT \(first)") })
        let connectIndex = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("CONNECT \(second)") })
        XCTAssertLessThan(disconnectIndex, connectIndex, "never two live connections")
        let count = try await harness.client.emitWithAck("connections", [], timeout: .seconds(5))
        XCTAssertEqual(count.args, [1])
        await harness.client.disconnect()
    }

    func testOfflineBufferDropsTheOldestAndFailPolicyThrows() async throws {
        try await start()
        var config = configuration()
        config.emitBufferLimit = 2
        let harness = ClientHarness(config)
        try await harness.client.emit("echo-event", ["a"])
        try await harness.client.emit("echo-event", ["b"])
        try await harness.client.emit("echo-event", ["c"])
        let dropped = await harness.client.droppedEmitCount
        XCTAssertEqual(dropped, 1)
        do {
            try await harness.client.emit("echo-event", ["d"], whenDisconnected: .fail)
            XCTFail("emitted while disconnected")
        } catch {
            XCTAssertEqual(error as? SocketIOError, .notConnected)
        }
        await harness.client.connect()
        _ = try await harness.connected()
        let first = try await harness.event("echoed")
        let second = try await harness.event("echoed")
        XCTAssertEqual([first.args, second.args], [["b"], ["c"]])
        let reply = try await harness.client.emitWithAck("echo", ["after"], timeout: .seconds(5))
        XCTAssertEqual(reply.args, ["after"])
        let extra = await harness.events.items.filter { $0.name == "echoed" }.count
        XCTAssertEqual(extra, 2, "the dropped and the refused emits never reach the server")
        await harness.client.disconnect()
    }

    func testShortPingIntervalKeepsTheConnection() async throws {
        // python-engineio truncates the interval to whole seconds in its open packet.
        try await start(["--ping-interval", "1", "--ping-timeout", "1"])
        let harness = ClientHarness(configuration())
        await harness.client.connect()
        let sid = try await harness.connected()
        // Stay through three ping cycles: a client that did not answer pings would be dropped by
        // the server 1 s after the first ping. There is no event to await: the point is that
        // nothing happens, so this waits on purpose.
        try await Task.sleep(for: .seconds(3.5))
        let reply = try await harness.client.emitWithAck("echo", ["still here"], timeout: .seconds(5))
        XCTAssertEqual(reply.args, ["still here"])
        let current = await harness.client.socketId
        XCTAssertEqual(current, sid)
        let states = await harness.states.items
        XCTAssertFalse(states.contains { if case .reconnecting = $0 { return true } else { return false } }, "\(states)")
        let disconnects = await peer.lines().filter { $0.hasPrefix("DISCONNECT") }
        XCTAssertTrue(disconnects.isEmpty)
        await harness.client.disconnect()
    }
}
