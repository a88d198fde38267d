import JSONValue
import Testing
@testable import SocketIO

/// One Socket.IO connection (WebSocket, Engine.IO and Socket.IO stacked) driven by a fake server.
@Suite struct SocketIOConnectionMachineTests {
    let t0 = ContinuousClock.now
    let origin = Endpoint(secure: false, host: "127.0.0.1", port: 3000, path: "/", query: nil)
    static let open = #"0{"sid":"eio-sid","upgrades":[],"pingInterval":1000,"pingTimeout":500,"maxPayload":1000000}"#

    func machine(namespace: String = "/", version: EngineIOVersion = .v4, maxMessageBytes: Int = 1 << 20) -> SocketIOConnectionMachine {
        SocketIOConnectionMachine(namespace: namespace, version: version, auth: ["token": "abc"], epoch: 3, maxMessageBytes: maxMessageBytes, seed: 5, now: t0)
    }

    /// Upgrades and opens Engine.IO; returns the text frames the client wrote in answer.
    func open(_ machine: inout SocketIOConnectionMachine) throws -> [String] {
        let request = try machine.upgradeRequest(origin: origin, path: "/socket.io/", query: [("token", "q")], headers: [("os", "linux")])
        let text = String(decoding: request, as: UTF8.self)
        #expect(text.hasPrefix("GET /socket.io/?EIO=\(machine.version.rawValue)&transport=websocket&token=q HTTP/1.1\r\n"))
        return FakeServer.clientTexts(machine.receive(FakeServer.accept(request) + FakeServer.text(Self.open), now: t0).written)
    }

    @Test func v4JoinsWithAuthAndKeepsWhatCameBeforeTheReply() throws {
        var connection = machine()
        #expect(try open(&connection) == [#"40{"token":"abc"}"#])
        let early = FakeServer.text(#"42["welcome",1]"#) + FakeServer.text(#"451-["bin",{"_placeholder":true,"num":0}]"#) + FakeServer.binary([7, 8])
        #expect(connection.receive(early, now: t0).isEmpty)
        let actions = connection.receive(FakeServer.text(#"40{"sid":"sio-sid"}"#) + FakeServer.text(#"42["after"]"#), now: t0)
        #expect(actions == [
            .connected(socketId: "sio-sid", early: [
                .event(SocketIOEvent(name: "welcome", args: [1])),
                .event(SocketIOEvent(name: "bin", args: [SocketIOBinary.placeholder(0)], attachments: [[7, 8]])),
            ]),
            .event(SocketIOEvent(name: "after", args: [], byteCount: 10)),
        ])
        #expect(connection.socketId == "sio-sid")
    }

    @Test func aConnectErrorIsARefusalAndClosesTheWebSocket() throws {
        var connection = machine()
        _ = try open(&connection)
        let actions = connection.receive(FakeServer.text(#"44{"message":"authentication failed","data":{"code":"E401"}}"#), now: t0)
        #expect(actions.last == .ended(.connectionRefused(message: "authentication failed", data: ["code": "E401"]), abort: false))
        #expect(FakeServer.clientFrames(actions.written).map(\.opcode) == [.close])
        #expect(connection.isEnded)
    }

    @Test func anHTTP401IsARefusal() throws {
        var connection = machine()
        _ = try connection.upgradeRequest(origin: origin, path: "/socket.io/", query: [], headers: [])
        let body = #"{"message":"no token"}"#
        let actions = connection.receive(Array("HTTP/1.1 401 Unauthorized\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8), now: t0)
        #expect(actions == [.ended(.connectionRefused(message: "no token", data: ["message": "no token"]), abort: true)])
    }

    @Test func v3JoinsTheDefaultNamespaceFirstThenAsksForItsOwn() throws {
        var connection = machine(namespace: "/admin", version: .v3)
        #expect(try open(&connection).isEmpty, "v3 sends no CONNECT for /")
        let asked = connection.receive(FakeServer.text("40") + FakeServer.text(#"42/admin,["early"]"#), now: t0)
        #expect(FakeServer.clientTexts(asked.written) == ["40/admin,"])
        let actions = connection.receive(FakeServer.text("40/admin,"), now: t0)
        #expect(actions == [.connected(socketId: "eio-sid", early: [.event(SocketIOEvent(name: "early", args: []))])])
        // v3 clients ping.
        #expect(connection.nextDeadline == t0 + .seconds(1))
        #expect(FakeServer.clientTexts(connection.tick(now: t0 + .seconds(1)).written) == ["2"])
    }

    @Test func attachmentsAreAssembledWithinTheByteLimit() throws {
        var connection = machine(maxMessageBytes: 100)
        _ = try open(&connection)
        _ = connection.receive(FakeServer.text(#"40{"sid":"x"}"#), now: t0)
        let header = #"452-["e",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#
        let complete = connection.receive(FakeServer.text(header) + FakeServer.binary([1]) + FakeServer.binary([2, 3]), now: t0)
        #expect(complete == [.event(SocketIOEvent(name: "e", args: [SocketIOBinary.placeholder(0), SocketIOBinary.placeholder(1)], attachments: [[1], [2, 3]],
                                                   byteCount: header.utf8.count - 1 + 3))])
        let tooMuch = connection.receive(FakeServer.text(header) + FakeServer.binary([UInt8](repeating: 0, count: 60)) + FakeServer.binary([UInt8](repeating: 0, count: 60)), now: t0)
        #expect(tooMuch.last == .ended(.payloadTooLarge(size: 120, limit: 100), abort: false))
    }

    @Test func acksAndTheServersDisconnect() throws {
        var connection = machine()
        _ = try open(&connection)
        _ = connection.receive(FakeServer.text(#"40{"sid":"x"}"#), now: t0)
        #expect(connection.receive(FakeServer.text(#"431["ok"]"#), now: t0) == [.ack(id: 1, payload: SocketIOPayload(args: ["ok"]))])
        #expect(connection.receive(FakeServer.text(#"42/other,["elsewhere"]"#), now: t0).isEmpty, "other namespaces are ignored")
        let kicked = connection.receive(FakeServer.text("41"), now: t0)
        #expect(kicked.last == .ended(.disconnectedByServer, abort: false))
    }

    @Test func closingSendsDisconnectAndWaitsForTheCloseAnswer() throws {
        var connection = machine()
        _ = try open(&connection)
        _ = connection.receive(FakeServer.text(#"40{"sid":"x"}"#), now: t0)
        let closing = connection.close(now: t0)
        let frames = FakeServer.clientFrames(closing.written)
        #expect(frames.map(\.opcode) == [.text, .text, .close])
        #expect(FakeServer.clientTexts(closing.written) == ["41", "1"])
        #expect(throws: SocketIOError.connectionLost("the connection is closing")) { try connection.send(SocketIOPacket(type: .event, data: ["x"]), attachments: []) }
        #expect(connection.nextDeadline == t0 + SocketIOConnectionMachine.closeTimeout)
        var silent = connection
        #expect(silent.tick(now: t0 + SocketIOConnectionMachine.closeTimeout) == [.ended(.disconnectedByClient, abort: true)])
        #expect(connection.receive(FakeServer.close(1000), now: t0) == [.ended(.disconnectedByClient, abort: false)])
    }

    @Test func aSilentServerIsDroppedAfterPingIntervalPlusTimeout() throws {
        var connection = machine()
        _ = try open(&connection)
        _ = connection.receive(FakeServer.text(#"40{"sid":"x"}"#), now: t0)
        #expect(connection.nextDeadline == t0 + .milliseconds(1500))
        #expect(FakeServer.clientTexts(connection.receive(FakeServer.text("2"), now: t0 + .seconds(1)).written) == ["3"])
        #expect(connection.tick(now: t0 + .milliseconds(1500)).isEmpty)
        #expect(connection.tick(now: t0 + .milliseconds(2500)) == [.ended(.heartbeatTimeout, abort: true)])
    }

    @Test func sendingBeforeTheJoinIsRefused() throws {
        var connection = machine()
        #expect(throws: SocketIOError.notConnected) { try connection.send(SocketIOPacket(type: .event, data: ["x"]), attachments: []) }
    }
}
