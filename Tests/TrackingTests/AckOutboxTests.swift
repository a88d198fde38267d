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
        for number in 0..<(AckOutbox.capacity + 5) { dropped += outbox.append(ack(number), held: false, storeBy: nil).map(\.ack) }
        #expect(outbox.count == AckOutbox.capacity)
        #expect(dropped.map(\.trackingId) == ["t0", "t1", "t2", "t3", "t4"])
        #expect(!outbox.contains(ack(0)))
        #expect(outbox.contains(ack(5)))
        let again = outbox.append(ack(5), held: false, storeBy: nil)
        #expect(again.isEmpty, "a key already waiting is not added twice")
        #expect(outbox.count == AckOutbox.capacity)
    }

    @Test func storedAcksReadAtStartAreBoundedToo() {
        var outbox = AckOutbox()
        _ = outbox.append(ack(-1, .rendered), held: false, storeBy: nil)
        let dropped = outbox.prependStored((0..<(AckOutbox.capacity + 1)).map { ack($0) })
        #expect(dropped.count == 2)
        #expect(outbox.count == AckOutbox.capacity)
        #expect(outbox.contains(ack(-1, .rendered)), "the newest stays")
        #expect(outbox.remove(ack(2)) != nil)
        #expect(outbox.remove(ack(2)) == nil)
    }

    /// The backend chooses the ids an ack carries: large ones are bounded by bytes, not by count.
    @Test func acksWithLargeIdsAreBoundedInBytes() {
        var outbox = AckOutbox()
        let idBytes = 200 * 1024
        func large(_ number: Int) -> PendingAck {
            let trackingId = "t\(number)" + String(repeating: "x", count: idBytes)
            return PendingAck(trackingId: trackingId, stage: .received, payload: ["trackingId": .string(trackingId)], created: 0)
        }
        var dropped: [PendingAck] = []
        for number in 0..<10 { dropped += outbox.append(large(number), held: false, storeBy: nil).map(\.ack) }
        #expect(outbox.byteCount <= AckOutbox.byteCapacity)
        #expect(outbox.count == 5, "five of 200 KiB fit in 1 MiB")
        #expect(dropped.map { $0.trackingId.prefix(2) } == ["t0", "t1", "t2", "t3", "t4"], "the oldest go first")
        #expect(outbox.remove(large(9)) != nil)
        #expect(outbox.count == 4)
        #expect(outbox.byteCount == 4 * large(5).byteCount, "what left is no longer counted")
        var alone = AckOutbox()
        _ = alone.append(PendingAck(trackingId: "huge", stage: .received, payload: .string(String(repeating: "y", count: 2 << 20)), created: 0),
                     held: false, storeBy: nil)
        #expect(alone.count == 1, "one ack is kept whatever its size")
    }
}
