import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveClient

@Suite struct EventBufferTests {
    private func event(_ seq: Int, _ type: String = "config.changed") -> EventEnvelope {
        EventEnvelope(bootId: "b1", seq: seq, type: type, time: "", data: ["n": .number(Double(seq))])
    }

    private func lagged(_ missed: Int) -> EventEnvelope {
        EventEnvelope(bootId: "b1", seq: nil, type: EventType.eventsLagged, time: "", data: ["missed": .number(Double(missed))])
    }

    private func drain(_ buffer: inout EventBuffer) -> [EventBuffer.Item] {
        var items: [EventBuffer.Item] = []
        while let item = buffer.pop() { items.append(item) }
        return items
    }

    @Test func eventsComeOutInOrder() {
        var buffer = EventBuffer(capacity: 8)
        for seq in 1...3 { buffer.push(event(seq)) }
        #expect(drain(&buffer) == [.event(event(1)), .event(event(2)), .event(event(3))])
        #expect(buffer.isEmpty)
    }

    @Test func aFullBufferDropsTheNewestAndMarksTheGapWhereItIs() {
        var buffer = EventBuffer(capacity: 2)
        for seq in 1...5 { buffer.push(event(seq)) }
        #expect(buffer.pop() == .event(event(1)))
        buffer.push(event(6))
        #expect(drain(&buffer) == [.event(event(2)), .lagged(missed: 3), .event(event(6))])
    }

    @Test func theDaemonsLaggedIsAMarkerMergedWithALocalGap() {
        var buffer = EventBuffer(capacity: 1)
        buffer.push(event(1))
        buffer.push(event(2))
        buffer.push(lagged(10))
        buffer.push(lagged(5))
        #expect(drain(&buffer) == [.event(event(1)), .lagged(missed: 16)])
    }

    @Test func aLaggedIsKeptEvenWhenTheBufferIsFull() {
        var buffer = EventBuffer(capacity: 1)
        buffer.push(event(1))
        buffer.push(lagged(4))
        #expect(drain(&buffer) == [.event(event(1)), .lagged(missed: 4)])
    }

    @Test func aLaggedWithoutAUsableCountStillMarksTheGap() {
        var buffer = EventBuffer(capacity: 1)
        buffer.push(EventEnvelope(bootId: "b1", seq: nil, type: EventType.eventsLagged, time: "", data: ["missed": "many"]))
        buffer.push(lagged(-3))
        #expect(drain(&buffer) == [.lagged(missed: 0)])
    }

    @Test func manyEventsThroughASmallBufferKeepTheirOrder() {
        var buffer = EventBuffer(capacity: 3)
        var seen: [Int] = []
        for seq in 1...5000 {
            buffer.push(event(seq))
            if seq % 2 == 0, case .event(let envelope)? = buffer.pop(), let n = envelope.seq { seen.append(n) }
        }
        for case .event(let envelope) in drain(&buffer) { seen.append(envelope.seq ?? -1) }
        #expect(seen == seen.sorted())
        #expect(buffer.eventCount == 0)
    }
}
