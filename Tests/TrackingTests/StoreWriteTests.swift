import Testing
@testable import InteractiveDaemon
import JSONValue
import Runtime

/// `Store.apply`: tracking's writes in one transaction, in order, and each alone when the
/// transaction fails.
@Suite @LoopActor struct StoreWriteTests {
    private func ack(_ trackingId: String, _ stage: TrackingStage) -> PendingAck {
        PendingAck(trackingId: trackingId, stage: stage, payload: ["trackingId": .string(trackingId), "stage": .string(stage.rawValue)],
                   created: TrackingHarness.now)
    }

    @Test func aBatchIsAppliedInOrder() async throws {
        let harness = try TrackingHarness()
        let state: JSONValue = ["timelineId": "t1"]
        let failures = await harness.store.apply([
            .ack(ack("a", .received)),
            .session("a", state: state, at: 1),
            .ack(ack("b", .received)),
            .session("b", state: state, at: 1),
            .deleteAck(ack("a", .received)),
            .session("b", state: nil, at: 2),
        ])
        #expect(failures.count == 6 && failures.allSatisfy { $0 == nil })
        #expect(try await harness.store.pendingAcks().map(\.trackingId) == ["b"])
        #expect(try await harness.store.trackingSessions().map(\.trackingId) == ["a"])
    }

    @Test func aWriteTheDatabaseRejectsCostsOnlyItself() async throws {
        let harness = try TrackingHarness()
        // A second connection to the same file installs a trigger that refuses one tracking id.
        let other = try SQLiteDatabase(path: harness.store.path)
        _ = try other.query("""
            CREATE TRIGGER refuse BEFORE INSERT ON pending_acks WHEN NEW.tracking_id = 'bad'
            BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
            """)
        let failures = await harness.store.apply([
            .ack(ack("good-1", .received)),
            .ack(ack("bad", .received)),
            .ack(ack("good-2", .received)),
        ])
        #expect(failures.map { $0 == nil } == [true, false, true])
        #expect(try await harness.store.pendingAcks().map(\.trackingId) == ["good-1", "good-2"])
    }
}
