import Testing
@testable import InteractiveDaemon
import JSONValue

/// `Store.apply`: tracking's writes in one transaction, in order, and each alone when the
/// transaction fails.
@Suite struct StoreWriteTests {
    private func ack(_ trackingId: String, _ stage: TrackingStage) -> PendingAck {
        PendingAck(trackingId: trackingId, stage: stage, payload: ["trackingId": .string(trackingId), "stage": .string(stage.rawValue)],
                   created: TrackingHarness.now)
    }

    @Test func aBatchIsAppliedInOrder() async throws {
        let harness = try TrackingHarness()
        let state: JSONValue = ["timelineId": "t1"]
        let failures = await harness.store.apply([
            .ack(ack("a", .received), sessionState: state, at: 1),
            .ack(ack("b", .received), sessionState: state, at: 1),
            .deleteAck(ack("a", .received)),
            .session("b", state: .none, at: 2),
        ])
        #expect(failures.count == 4 && failures.allSatisfy { $0 == nil })
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
            .ack(ack("good-1", .received), sessionState: .none, at: 1),
            .ack(ack("bad", .received), sessionState: .none, at: 1),
            .ack(ack("good-2", .received), sessionState: .none, at: 1),
        ])
        #expect(failures.map { $0 == nil } == [true, false, true])
        #expect(try await harness.store.pendingAcks().map(\.trackingId) == ["good-1", "good-2"])
    }

    /// Writes the store refused are tried again in order; a long outage keeps one state per
    /// session, and an ack delivered meanwhile is not stored again.
    @Test func refusedWritesAreRetriedCompacted() {
        var refused = RefusedWrites()
        let state: JSONValue = ["timelineId": "t1"]
        refused.append([
            .ack(ack("a", .received), sessionState: state, at: 1),
            .session("a", state: ["timelineId": "t1", "attachedAt": 2], at: 2),
            .ack(ack("b", .received), sessionState: state, at: 3),
            .session("a", state: .none, at: 4),
            .deleteAck(ack("c", .received)),
        ])
        #expect(refused.count == 5)
        let waiting: Set<String> = ["a"]
        let retried = refused.takeForRetry { waiting.contains($0.trackingId) }
        #expect(refused.isEmpty)
        #expect(retried.map(describe) == ["ack a", "session b", "session a nil", "delete c"])
    }

    private func describe(_ write: TrackingWrite) -> String {
        switch write {
        case .ack(let ack, _, _): return "ack \(ack.trackingId)"
        case .session(let trackingId, let state, _): return "session \(trackingId)" + (state == nil ? " nil" : "")
        case .deleteAck(let ack): return "delete \(ack.trackingId)"
        }
    }
}
