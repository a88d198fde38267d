import JSONValue
import Testing
@testable import SocketIO

/// What a hostile server can make the client hold.
@Suite struct SocketIOLimitsTests {
    @Test func attachmentsOfOnePacketAreBoundedInBytes() throws {
        var assembler = SocketIOBinaryAssembler(byteLimit: 100)
        let packet = try SocketIOCodec.decode(Array(#"52-["e",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#.utf8))
        #expect(try assembler.start(packet) == nil)
        #expect(try assembler.add([UInt8](repeating: 1, count: 60)) == nil)
        #expect(throws: SocketIOError.payloadTooLarge(size: 120, limit: 100)) {
            try assembler.add([UInt8](repeating: 1, count: 60))
        }
    }

    @Test func packetsBeforeTheConnectReplyAreBounded() {
        var early = EarlyPackets()
        let event = SocketIOConnectionMachine.Incoming.event(SocketIOEvent(name: "overlay", args: [], attachments: [], ackToken: nil))
        for _ in 0..<(EarlyPackets.maxCount + 10) { early.keep(event, size: 10) }
        #expect(early.kept.count == EarlyPackets.maxCount)
        #expect(early.dropped == 10)
        var large = EarlyPackets()
        large.keep(event, size: EarlyPackets.maxBytes)
        large.keep(event, size: 1)
        #expect(large.kept.count == 1)
        #expect(large.dropped == 1)
    }
}
