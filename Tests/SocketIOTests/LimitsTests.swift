import JSONValue
import Synchronization
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
        let event = SocketIOSession.Incoming.event(SocketIOEvent(name: "overlay", args: [], attachments: [], ackToken: nil))
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

/// Flow control between the connection and the consumer of `events`.
@Suite struct EventFlowTests {
    private final class Recorder: Sendable {
        let calls = Mutex<[Bool]>([])
        func record(_ paused: Bool) { calls.withLock { $0.append(paused) } }
        var all: [Bool] { calls.withLock { $0 } }
    }

    @Test func readingPausesWhileTheConsumerIsBehindAndResumesWhenItCatchesUp() {
        let flow = EventFlow(highCount: 3, highBytes: 1_000, lowCount: 1, lowBytes: 500)
        let recorder = Recorder()
        flow.attach { recorder.record($0) }
        for _ in 0..<4 { flow.produced(size: 10) }
        #expect(recorder.all == [true])
        #expect(flow.isPaused)
        flow.produced(size: 10)
        flow.consumed(size: 10)
        flow.consumed(size: 10)
        flow.consumed(size: 10)
        #expect(recorder.all == [true], "still above the low-water mark")
        flow.consumed(size: 10)
        #expect(recorder.all == [true, false])
        #expect(!flow.isPaused)
    }

    @Test func bytesCountToo() {
        let flow = EventFlow(highCount: 100, highBytes: 1_000, lowCount: 50, lowBytes: 500)
        let recorder = Recorder()
        flow.attach { recorder.record($0) }
        flow.produced(size: 1_001)
        #expect(recorder.all == [true])
        flow.consumed(size: 1_001)
        #expect(recorder.all == [true, false])
    }

    @Test func aNewConnectionIsPausedAtOnceWhenTheBacklogIsStillHigh() {
        let flow = EventFlow(highCount: 1, highBytes: 1_000, lowCount: 0, lowBytes: 0)
        flow.produced(size: 1)
        flow.produced(size: 1)
        let recorder = Recorder()
        flow.attach { recorder.record($0) }
        #expect(recorder.all == [true])
    }
}
