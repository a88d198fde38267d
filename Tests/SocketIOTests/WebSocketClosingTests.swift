import Runtime
import Testing
@testable import SocketIO

/// The close handshake as a peer sees it, and failing fast on invalid UTF-8 (Peers/ws_peer.py).
@Suite(.serialized) @LoopActor struct WebSocketClosingTests {
    /// ws-echo exits as soon as `receive()` reports the server's close: the close reply must be on
    /// the wire by then (it used to be lost now and then: Autobahn graded those cases UNCLEAN).
    @Test func wsEchoAnswersTheServersCloseBeforeItExits() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        for _ in 0..<5 {
            let (status, output) = try await runWsEcho("ws://127.0.0.1:\(peer.port)/close-code")
            #expect(status == 0, "\(output)")
            let line = try await peer.line(prefix: "RESULT close-code ")
            #expect(line == "RESULT close-code 4001")
        }
    }

    @Test(arguments: ["bad-utf8-partial-frame", "bad-utf8-fragment"])
    func invalidUTF8FailsBeforeTheMessageEnds(scenario: String) async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let socket = try await WebSocket.connect(url: "ws://127.0.0.1:\(peer.port)/\(scenario)", timeout: .seconds(5))
        // The rest of the message never comes: only failing fast ends this receive.
        await #expect(throws: SocketIOError.protocolViolation("WebSocket 1007: text message is not valid UTF-8")) {
            try await withTimeout(.seconds(5), "receive") { try await socket.receive() }
        }
        let line = try await peer.line(prefix: "RESULT \(scenario) ")
        #expect(line == "RESULT \(scenario) 1007")
    }
}
