import Foundation
import JSONValue
import XCTest
@testable import SocketIO

/// Frame-level behaviour against the scripted `websockets` peer (Peers/ws_peer.py).
final class WebSocketPeerTests: XCTestCase {
    var peer: PeerProcess!

    override func setUp() async throws {
        peer = try await PeerProcess.start("ws_peer.py")
    }

    override func tearDown() async throws {
        peer?.stop()
    }

    func open(_ path: String, maxMessageBytes: Int = 16 << 20) async throws -> WebSocket {
        try await WebSocket.connect(
            url: "ws://127.0.0.1:\(peer.port)\(path)", headers: ["x-tenant-id": "vtvlive", "os": "linuxstb"],
            timeout: .seconds(5), maxMessageBytes: maxMessageBytes)
    }

    func receive(_ socket: WebSocket, timeout: Duration = .seconds(5)) async throws -> WebSocketMessage {
        try await withTimeout(timeout, "receive") { try await socket.receive() }
    }

    /// Expects `receive()` to fail with a protocol violation and the server to see `code`.
    func assertFails(_ path: String, code: Int, maxMessageBytes: Int = 16 << 20) async throws {
        let socket = try await open(path, maxMessageBytes: maxMessageBytes)
        do {
            let message = try await receive(socket)
            XCTFail("expected a violation, got \(message)")
        } catch let error as SocketIOError {
            guard case .protocolViolation(let text) = error else { return XCTFail("unexpected \(error)") }
            XCTAssertTrue(text.contains("\(code)"), text)
        }
        let name = String(path.dropFirst())
        let line = try await peer.line(prefix: "RESULT \(name) ")
        XCTAssertEqual(line, "RESULT \(name) \(code)")
    }

    func testFragmentedMessagesAreReassembled() async throws {
        let socket = try await open("/fragmented")
        let first = try await receive(socket)
        let second = try await receive(socket)
        XCTAssertEqual(first, .text("hello world"))
        XCTAssertEqual(second, .binary([1, 2, 3, 4, 5]))
        socket.close()
        let line = try await peer.line(prefix: "RESULT fragmented ")
        XCTAssertEqual(line, "RESULT fragmented 1000")
    }

    func testPingsBetweenFragmentsAreAnswered() async throws {
        let socket = try await open("/ping-fragments")
        let first = try await receive(socket)
        let second = try await receive(socket)
        XCTAssertEqual(first, .text("one two three"))
        XCTAssertEqual(second, .text("pongs-ok"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT ping-fragments 1000")
    }

    func testSixteenAndSixtyFourBitLengthsBothWays() async throws {
        let socket = try await open("/large")
        let big = try await receive(socket)
        let medium = try await receive(socket)
        guard case .binary(let bigBytes) = big, case .binary(let mediumBytes) = medium else { return XCTFail("not binary") }
        XCTAssertEqual(bigBytes.count, 70_000)
        XCTAssertEqual(mediumBytes.count, 300)
        try socket.send(big)
        try socket.send(medium)
        let verdict = try await receive(socket)
        XCTAssertEqual(verdict, .text("large-ok"))
        socket.close()
        _ = try await peer.line(prefix: "RESULT large 1000")
    }

    func testInvalidUTF8IsClosedWith1007() async throws {
        try await assertFails("/bad-utf8", code: 1007)
    }

    func testReservedBitsAreClosedWith1002() async throws {
        try await assertFails("/reserved-bits", code: 1002)
    }

    func testUnknownOpcodeIsClosedWith1002() async throws {
        try await assertFails("/unknown-opcode", code: 1002)
    }

    func testOversizedMessageIsClosedWith1009() async throws {
        try await assertFails("/oversized", code: 1009, maxMessageBytes: 1 << 20)
    }

    func testServerCloseCodeIsEchoed() async throws {
        let socket = try await open("/close-code")
        do {
            let message = try await receive(socket)
            XCTFail("expected a close, got \(message)")
        } catch let error as SocketIOError {
            XCTAssertEqual(error, .closedByPeer(code: 4001, reason: "bye"))
        }
        _ = try await peer.line(prefix: "RESULT close-code 4001")
    }

    func testClientCloseHandshake() async throws {
        let socket = try await open("/client-close")
        socket.close(code: 1001, reason: "going away")
        do {
            let message = try await receive(socket)
            XCTFail("expected the close reply, got \(message)")
        } catch let error as SocketIOError {
            XCTAssertEqual(error, .closedByPeer(code: 1001, reason: "going away"))
        }
        _ = try await peer.line(prefix: "RESULT client-close 1001 going away")
    }

    func testCustomHeadersReachTheServer() async throws {
        let socket = try await open("/headers")
        guard case .text(let text) = try await receive(socket) else { return XCTFail("not text") }
        let headers = try JSONValue.parse(text)
        XCTAssertEqual(headers["x-tenant-id"], "vtvlive")
        XCTAssertEqual(headers["os"], "linuxstb")
        XCTAssertEqual(headers["sec-websocket-version"], "13")
        socket.close()
    }

    func testBlackHoledPeerIsDetectedWithinPingIntervalPlusTimeout() async throws {
        let harness = ClientHarness(SocketIOConfiguration(url: "ws://127.0.0.1:\(peer.port)", reconnect: ReconnectPolicy(baseMs: 5000, capMs: 5000)))
        await harness.client.connect()
        _ = try await harness.connected()
        _ = try await peer.line(prefix: "RESULT blackhole-connected 40")
        let state = try await harness.state(timeout: .seconds(5)) { if case .reconnecting = $0 { return true } else { return false } }
        guard case .reconnecting(_, _, let error) = state else { return XCTFail("unexpected \(state)") }
        XCTAssertEqual(error, .heartbeatTimeout)
        // Measured between the client's own log lines (taken when logged), so that the test's
        // scheduling does not count: the CONNECT reply was the peer's last traffic.
        let connected = try await harness.logs.next(timeout: .seconds(1)) { $0.text.contains("connected to") }
        let failed = try await harness.logs.next(timeout: .seconds(1)) { $0.text.contains("no heartbeat") }
        let elapsed = connected.time.duration(to: failed.time)
        // pingInterval 500 ms + pingTimeout 500 ms + 1 s.
        XCTAssertLessThanOrEqual(elapsed, .seconds(2), "detected after \(elapsed)")
        XCTAssertGreaterThanOrEqual(elapsed, .milliseconds(900), "detected too early: \(elapsed)")
        await harness.client.disconnect()
    }

    func testEventsInTheSameSegmentAsTheConnectReplyAreKept() async throws {
        let harness = ClientHarness(SocketIOConfiguration(url: "ws://127.0.0.1:\(peer.port)", path: "/coalesced/"))
        await harness.client.connect()
        let sid = try await harness.connected()
        XCTAssertEqual(sid, "co-socket")
        let first = try await harness.event("first")
        let second = try await harness.event("second")
        let third = try await harness.event("third")
        XCTAssertEqual(first.args, [1])
        XCTAssertEqual(second.binary(second.args[0]), [7, 8])
        XCTAssertEqual(third.args, [3])
        await harness.client.disconnect()
        _ = try await peer.line(prefix: "RESULT coalesced 1000")
    }

    func testWsEchoExecutable() async throws {
        let (status, text) = try await runWsEcho("ws://127.0.0.1:\(peer.port)/echo-check")
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.contains("code 1000"), text)
        _ = try await peer.line(prefix: "RESULT echo-check OK")
    }
}
