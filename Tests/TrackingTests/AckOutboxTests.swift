@testable import InteractiveDaemon
import JSONValue
import Testing

/// The emit-ack backlog: bounded, oldest dropped first.
@Suite struct AckOutboxTests {
    private func ack(_ number: Int, _ stage: TrackingStage = .received) -> PendingAck {
        PendingAck(trackingId: "t\(number)", stage: stage, payload: [:], created: Int64(number))
    }

    @Test func theOldestAreDroppedPastTheCapacity() {
        var outbox = AckOutbox()
        var dropped: [PendingAck] = []
        for number in 0..<(AckOutbox.capacity + 5) { dropped += outbox.append(ack(number)) }
        #expect(outbox.count == AckOutbox.capacity)
        #expect(dropped.map(\.trackingId) == ["t0", "t1", "t2", "t3", "t4"])
        #expect(!outbox.contains(ack(0)))
        #expect(outbox.contains(ack(5)))
        let again = outbox.append(ack(5))
        #expect(again.isEmpty, "a key already waiting is not added twice")
        #expect(outbox.count == AckOutbox.capacity)
    }

    @Test func storedAcksReadAtStartAreBoundedToo() {
        var outbox = AckOutbox()
        outbox.append(ack(-1, .rendered))
        let dropped = outbox.prependStored((0..<(AckOutbox.capacity + 1)).map { ack($0) })
        #expect(dropped.count == 2)
        #expect(outbox.count == AckOutbox.capacity)
        #expect(outbox.contains(ack(-1, .rendered)), "the newest stays")
        let removed = outbox.remove(ack(2))
        let removedAgain = outbox.remove(ack(2))
        #expect(removed && !removedAgain)
    }
}
