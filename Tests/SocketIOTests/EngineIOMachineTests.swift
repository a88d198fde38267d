import Testing
@testable import SocketIO

/// The Engine.IO machine alone, with an injected clock.
@Suite struct EngineIOMachineTests {
    let t0 = ContinuousClock.now
    static let open = Array(#"0{"sid":"s","upgrades":[],"pingInterval":1000,"pingTimeout":500,"maxPayload":10}"#.utf8)

    func opened(_ version: EngineIOVersion) -> EngineIOMachine {
        var machine = EngineIOMachine(version: version, now: t0)
        _ = machine.receive(opcode: .text, payload: Self.open, now: t0)
        return machine
    }

    @Test func theFirstPacketMustBeTheOpenPacket() {
        var machine = EngineIOMachine(version: .v4, now: t0)
        #expect(machine.nextDeadline == nil, "no heartbeat before the open packet")
        #expect(machine.receive(opcode: .text, payload: Array("40".utf8), now: t0) == [.failed(.protocolViolation("expected the Engine.IO open packet, got 40"))])
        var good = EngineIOMachine(version: .v4, now: t0)
        #expect(good.receive(opcode: .text, payload: Self.open, now: t0)
                == [.opened(EngineIOHandshake(sid: "s", pingInterval: .seconds(1), pingTimeout: .milliseconds(500), maxPayload: 10))])
        #expect(good.receive(opcode: .text, payload: Self.open, now: t0) == [.failed(.protocolViolation("a second Engine.IO open packet"))])
    }

    @Test func v4AnswersPingsAndDeclaresASilentServerDead() {
        var machine = opened(.v4)
        #expect(machine.receive(opcode: .text, payload: Array("2".utf8), now: t0) == [.send(.pong([]))])
        #expect(machine.receive(opcode: .text, payload: Array("6".utf8), now: t0).isEmpty)
        #expect(machine.receive(opcode: .text, payload: Array("4hi".utf8), now: t0) == [.message(.text(Array("hi".utf8)))])
        #expect(machine.nextDeadline == t0 + .milliseconds(1500))
        #expect(machine.tick(now: t0 + .milliseconds(1499)).isEmpty, "v4 clients never ping")
        machine.heard(at: t0 + .seconds(1))
        #expect(machine.tick(now: t0 + .milliseconds(1500)).isEmpty, "traffic moved the deadline")
        #expect(machine.nextDeadline == t0 + .milliseconds(2500))
        #expect(machine.tick(now: t0 + .milliseconds(2500)) == [.failed(.heartbeatTimeout)])
        #expect(machine.nextDeadline == nil)
    }

    @Test func v3ClientsPingEveryInterval() {
        var machine = opened(.v3)
        #expect(machine.nextDeadline == t0 + .seconds(1))
        #expect(machine.tick(now: t0 + .milliseconds(999)).isEmpty)
        #expect(machine.tick(now: t0 + .seconds(1)) == [.send(.ping([]))])
        machine.heard(at: t0 + .milliseconds(1100))  // the pong
        #expect(machine.nextDeadline == t0 + .seconds(2))
        #expect(machine.tick(now: t0 + .seconds(2)) == [.send(.ping([]))])
        #expect(machine.tick(now: t0 + .milliseconds(2600)) == [.failed(.heartbeatTimeout)], "no pong for the second ping")
    }

    @Test func theServersCloseAndMaxPayload() throws {
        var machine = opened(.v4)
        #expect(throws: SocketIOError.payloadTooLarge(size: 11, limit: 10)) { try machine.encode([.message(Array("0123456789".utf8))]) }
        #expect(try machine.encode([.message(Array("x".utf8)), .binary([1])]).map(\.1) == [Array("4x".utf8), [1]])
        #expect(machine.receive(opcode: .text, payload: Array("1".utf8), now: t0) == [.failed(.connectionLost("the server closed the Engine.IO session"))])
        #expect(machine.receive(opcode: .text, payload: Array("4late".utf8), now: t0).isEmpty)
    }
}
