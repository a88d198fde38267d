import Testing
@testable import SocketIO

/// The WebSocket client machine alone: bytes and time in, actions out.
@Suite struct WebSocketMachineTests {
    let t0 = ContinuousClock.now
    let endpoint = Endpoint(secure: false, host: "127.0.0.1", port: 8080, path: "/socket.io/", query: "EIO=4")

    /// A machine past a successful upgrade, and the actions of the answer.
    func opened(maxMessageBytes: Int = 1 << 20, after extra: [UInt8] = []) throws -> (WebSocketMachine, [WebSocketMachine.Action]) {
        var machine = WebSocketMachine(maxMessageBytes: maxMessageBytes, seed: 7)
        let request = try machine.upgradeRequest(endpoint: endpoint, headers: [])
        let actions = machine.receive(FakeServer.accept(request) + extra, now: t0)
        return (machine, actions)
    }

    @Test func upgradeRequestCarriesTheKeyAndHeadersAndAValidAnswerOpens() throws {
        let machine = WebSocketMachine(maxMessageBytes: 1024, seed: 1)
        let request = try machine.upgradeRequest(endpoint: endpoint, headers: [("x-tenant-id", "vtvlive"), ("Host", "evil")])
        let text = String(decoding: request, as: UTF8.self)
        #expect(text.hasPrefix("GET /socket.io/?EIO=4 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"))
        #expect(text.contains("x-tenant-id: vtvlive\r\n"))
        #expect(!text.contains("evil"), "reserved headers are not overridden")
        #expect(FakeServer.header("Sec-WebSocket-Version", in: request) == "13")
        #expect(text.hasSuffix("\r\n\r\n"))
        // Frames that came in the same segment as the answer are delivered at once.
        let (_, actions) = try opened(after: FakeServer.text("hello"))
        #expect(actions == [.opened, .message(.text, Array("hello".utf8))])
    }

    @Test func headersThatCouldInjectAreRefused() {
        let machine = WebSocketMachine(maxMessageBytes: 1024, seed: 1)
        #expect(throws: SocketIOError.handshakeFailed(status: 0, message: "invalid request header x\r\ny")) {
            try machine.upgradeRequest(endpoint: endpoint, headers: [("x\r\ny", "1")])
        }
        #expect(throws: SocketIOError.connectFailed("the a header holds a control character; refusing to send it")) {
            try machine.upgradeRequest(endpoint: endpoint, headers: [("a", "tab\there")])
        }
    }

    @Test func aWrongAcceptKeyFailsTheUpgrade() {
        var machine = WebSocketMachine(maxMessageBytes: 1024, seed: 1)
        let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n"
        #expect(machine.receive(Array(answer.utf8), now: t0) == [.abort(.handshakeFailed(status: 101, message: "wrong Sec-WebSocket-Accept"))])
        #expect(machine.isClosed)
    }

    @Test func aRefusalKeepsItsBodyEvenInPieces() {
        var machine = WebSocketMachine(maxMessageBytes: 1024, seed: 1)
        let body = #"{"message":"bad token"}"#
        let head = "HTTP/1.1 401 Unauthorized\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        #expect(machine.receive(Array((head + body.prefix(5)).utf8), now: t0).isEmpty)
        #expect(machine.receive(Array(body.dropFirst(5).utf8), now: t0) == [.abort(.handshakeFailed(status: 401, message: body))])
    }

    @Test func anOversizedResponseHeaderFails() {
        var machine = WebSocketMachine(maxMessageBytes: 1024, seed: 1)
        let actions = machine.receive(Array("HTTP/1.1 101 OK\r\nX: ".utf8) + [UInt8](repeating: 65, count: 20_000), now: t0)
        #expect(actions == [.abort(.handshakeFailed(status: 0, message: "response header too large"))])
    }

    @Test func fragmentsAreReassembledAndPingsBetweenThemAnswered() throws {
        var (machine, _) = try opened()
        let bytes = FakeServer.frame(0x01, Array("one ".utf8)) + FakeServer.frame(0x89, Array("p".utf8))
            + FakeServer.frame(0x00, Array("two".utf8)) + FakeServer.frame(0x80, Array(" three".utf8))
        let actions = machine.receive(bytes, now: t0)
        #expect(actions.count == 2)
        let pong = FakeServer.clientFrames(actions.written)
        #expect(pong == [WebSocketFrame(fin: true, opcode: .pong, payload: Array("p".utf8))])
        #expect(actions.last == .message(.text, Array("one two three".utf8)))
    }

    @Test func invalidUTF8FailsBeforeTheFrameIsComplete() throws {
        var (machine, _) = try opened()
        // A 200-byte text frame whose first bytes already cannot be UTF-8.
        let start: [UInt8] = [0x81, 126, 0, 200] + Array("ok".utf8) + [0xC0]
        let actions = machine.receive(start, now: t0)
        #expect(actions.last == .closed(.protocolViolation("WebSocket 1007: text message is not valid UTF-8")))
        #expect(FakeServer.clientFrames(actions.written) == [WebSocketFrame(fin: true, opcode: .close, payload: [0x03, 0xEF])])
        #expect(machine.receive(FakeServer.text("late"), now: t0).isEmpty, "nothing after the end")
    }

    @Test func aMessageAboveTheLimitIsClosedWith1009() throws {
        var (machine, _) = try opened(maxMessageBytes: 100)
        let actions = machine.receive(FakeServer.frame(0x02, [UInt8](repeating: 1, count: 60)) + FakeServer.frame(0x80, [UInt8](repeating: 1, count: 60)), now: t0)
        #expect(actions.last == .closed(.protocolViolation("WebSocket 1009: message exceeds the limit of 100 bytes")))
        #expect(FakeServer.clientFrames(actions.written).first?.payload.prefix(2) == [0x03, 0xF1])
    }

    @Test func theServersCloseIsEchoed() throws {
        var (machine, _) = try opened()
        let actions = machine.receive(FakeServer.close(4001, "bye"), now: t0)
        #expect(FakeServer.clientFrames(actions.written) == [WebSocketFrame(fin: true, opcode: .close, payload: [0x0F, 0xA1])])
        #expect(actions.last == .closed(.closedByPeer(code: 4001, reason: "bye")))
        #expect(throws: SocketIOError.connectionLost("the WebSocket is closing")) { try machine.send([(.text, [65])]) }
    }

    @Test func theClientsCloseHandshakeEndsOnTheAnswerOrTimesOut() throws {
        var (machine, _) = try opened()
        let closing = machine.close(code: 1001, reason: "going away", timeout: .seconds(2), now: t0)
        #expect(FakeServer.clientFrames(closing.written) == [WebSocketFrame(fin: true, opcode: .close, payload: [0x03, 0xE9] + Array("going away".utf8))])
        #expect(machine.closeDeadline == t0 + .seconds(2))
        // Data still arriving is delivered; pings are no longer answered.
        #expect(machine.receive(FakeServer.text("late") + FakeServer.frame(0x89, []), now: t0) == [.message(.text, Array("late".utf8))])
        var timedOut = machine
        #expect(timedOut.tick(now: t0 + .seconds(1)).isEmpty)
        #expect(timedOut.tick(now: t0 + .seconds(2)) == [.abort(.connectionLost("close handshake timed out"))])
        #expect(machine.receive(FakeServer.close(1001, "going away"), now: t0 + .milliseconds(10)) == [.closed(.closedByPeer(code: 1001, reason: "going away"))])
    }

    @Test func theStreamEndingWithoutACloseFrameIsALoss() throws {
        var (machine, _) = try opened()
        #expect(machine.connectionEnded(nil) == [.abort(.connectionLost("the server closed the connection without a close frame"))])
        var upgrading = WebSocketMachine(maxMessageBytes: 10, seed: 1)
        #expect(upgrading.connectionEnded(nil) == [.abort(.handshakeFailed(status: 0, message: "the server closed the connection during the upgrade"))])
    }

    @Test func sentFramesAreMaskedAndDecodeBack() throws {
        var (machine, _) = try opened()
        #expect(throws: SocketIOError.connectionLost("the WebSocket is not open yet")) {
            var fresh = WebSocketMachine(maxMessageBytes: 10, seed: 1)
            _ = try fresh.send([(.text, [65])])
        }
        let big = [UInt8](repeating: 9, count: 70_000)
        let bytes = try machine.send([(.text, Array("hi".utf8)), (.binary, big)])
        #expect(FakeServer.clientFrames(bytes) == [WebSocketFrame(fin: true, opcode: .text, payload: Array("hi".utf8)),
                                                   WebSocketFrame(fin: true, opcode: .binary, payload: big)])
    }

    @Test func aMessageLimitLeavesWhatFollowsForTheNextCall() throws {
        var (machine, _) = try opened()
        let bytes = FakeServer.text("first") + FakeServer.frame(0xC1, [1]) + FakeServer.text("never")
        #expect(machine.receive(bytes, now: t0, messageLimit: 1) == [.message(.text, Array("first".utf8))])
        #expect(machine.receive([], now: t0, messageLimit: 0).isEmpty)
        let violation = machine.receive([], now: t0, messageLimit: 1)
        #expect(violation.last == .closed(.protocolViolation("WebSocket 1002: reserved bits set without a negotiated extension")))
    }

    @Test func invalidCloseFramesAreViolations() throws {
        var (a, _) = try opened()
        #expect(a.receive(FakeServer.frame(0x88, [3]), now: t0).last == .closed(.protocolViolation("WebSocket 1002: close frame with a 1-byte payload")))
        var (b, _) = try opened()
        #expect(b.receive(FakeServer.close(1005), now: t0).last == .closed(.protocolViolation("WebSocket 1002: invalid close code 1005")))
        var (c, _) = try opened()
        #expect(c.receive(FakeServer.frame(0x88, [3, 0xE8, 0xFF]), now: t0).last == .closed(.protocolViolation("WebSocket 1007: close reason is not valid UTF-8")))
    }
}
