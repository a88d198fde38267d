@testable import InteractiveDaemon
import JSONValue
import Runtime
import Testing

/// The tracker against a real store and the test's timers: acks go out as they are decided,
/// reach the store only when undelivered past the delay, leave it once delivered (acknowledged,
/// or proven carried by the heartbeat), go again after a drop or a restart, and a restart closes
/// the sessions left open.
@Suite(.timeLimit(.minutes(1))) @LoopActor struct TrackerTests {
    @Test func offlineAcksAreStoredAfterTheDelay() async throws {
        let harness = try TrackingHarness()
        try await harness.withTracker { tracker in
            tracker.receive("t1", loadedAt: 9_700)
            await tracker.writer.idle()
            #expect(await harness.storedAcks().isEmpty, "nothing is written before the delay")
            #expect(await harness.status()?["unstoredWrites"] == 2)
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().map(\.stage) == [.received, .rendered])
            #expect(await harness.storedSessions().isEmpty, "its rendered is decided: a restart has nothing to close")
            let status = await harness.status()
            #expect(status?["pendingAcks"] == 2)
            #expect(status?["unstoredWrites"] == 0)
            #expect(status?["delivered"] == 0)
            #expect(status?["connected"] == false)
        }
    }

    /// The daemon's usual case costs the store nothing: an overlay shown, answered and replaced
    /// while the server acknowledges at once.
    @Test func anOverlayTheServerAcknowledgesAtOnceIsNeverStored() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport(.ack)
        try await harness.withTracker { tracker in
            tracker.setTransport(transport)
            tracker.receive("t1")
            tracker.record(.shown(trackingId: "t1"))
            tracker.record(.loaded(trackingId: "t1", at: 9_700))
            tracker.record(.answerAttempted(trackingId: "t1", at: 9_800))
            tracker.record(.answerSucceeded(trackingId: "t1", at: 9_900))
            tracker.record(.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay"))
            await harness.storeDelayPassed(tracker)
            #expect(transport.emitted.stages(of: "t1") == ["received", "rendered", "answer", "answer-succeeded"])
            #expect(await harness.storedAcks().isEmpty)
            #expect(await harness.storedSessions().isEmpty)
            #expect(await harness.status()?["delivered"] == 4)
            #expect(await harness.status()?["openSessions"] == 0)
        }
    }

    @Test func connectingSendsWhatWaitedInOrderAndDeliveredAcksLeaveTheStore() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport(.ack)
        try await harness.withTracker { tracker in
            tracker.receive("t1", loadedAt: 9_700)
            tracker.receive("t2", loadedAt: 9_700)
            tracker.record(.answerAttempted(trackingId: "t1", at: 9_800))
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().count == 5)

            tracker.setTransport(transport)
            #expect(transport.emitted.compactMap(\.trackingId) == ["t1", "t1", "t2", "t2", "t1"])
            #expect(transport.emitted.stages(of: "t1") == ["received", "rendered", "answer"])
            #expect(transport.emitted.stages(of: "t2") == ["received", "rendered"])
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().isEmpty)
            #expect(await harness.status()?["delivered"] == 5)
            #expect(await harness.status()?["pendingAcks"] == 0)

            // A reconnect sends nothing delivered; a new stage goes out at once.
            tracker.setTransport(nil)
            let next = FakeTransport(.ack, connection: 2)
            tracker.setTransport(next)
            tracker.record(.answerSucceeded(trackingId: "t1", at: 9_900))
            #expect(next.emitted.compactMap(\.stage) == ["answer-succeeded"])
            #expect(transport.emitted.count == 5)
        }
    }

    /// A server that never acknowledges (BACKEND.md allows it): the heartbeat's proof that the
    /// connection carried the ack counts it delivered; without that proof it stays.
    @Test func anAckTheServerNeverAcknowledgesIsDeliveredByTheHeartbeatsProof() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport(.silent)
        try await harness.withTracker { tracker in
            tracker.setTransport(transport)
            tracker.receive("t1", emitTimestamp: nil)
            let proof = transport.mark
            tracker.receive("t2", emitTimestamp: nil)
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().map(\.trackingId) == ["t1", "t2"], "undelivered past the delay")
            #expect(await harness.storedSessions().sorted() == ["t1", "t2"], "open, not rendered")

            tracker.carried(upTo: proof)
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().map(\.trackingId) == ["t2"], "the proof covers t1 only")
            #expect(await harness.status()?["delivered"] == 1)
            tracker.carried(upTo: transport.mark)
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().isEmpty)
            #expect(transport.emitted.count == 2, "nothing sent twice")
        }
    }

    @Test func acksOfADroppedConnectionAreSentAgainAfterTheReconnect() async throws {
        let harness = try TrackingHarness()
        let first = FakeTransport(.silent)
        try await harness.withTracker { tracker in
            tracker.setTransport(first)
            tracker.receive("t1", loadedAt: 9_700)
            #expect(first.emitted.compactMap(\.stage) == ["received", "rendered"])
            tracker.setTransport(nil)
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().map(\.stage) == [.received, .rendered])

            // A transport whose connection is down after all: tracking goes offline.
            tracker.setTransport(FakeTransport(.offline))
            #expect(await harness.status()?["connected"] == false)
            tracker.record(.answerAttempted(trackingId: "t1", at: 9_800))
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().count == 3)

            let second = FakeTransport(.ack, connection: 2)
            tracker.setTransport(second)
            #expect(second.emitted.stages(of: "t1") == ["received", "rendered", "answer"])
            // The old connection's late acknowledgements change nothing.
            first.acknowledgeAll()
            await harness.storeDelayPassed(tracker)
            #expect(await harness.storedAcks().isEmpty)
            #expect(await harness.status()?["delivered"] == 3)
            #expect(first.emitted.count == 2)
        }
    }

    @Test func aRestartDeliversStoredAcksAndClosesOpenSessions() async throws {
        let before = try TrackingHarness()
        try await before.withTracker { tracker in
            // a: open, not rendered. b: rendered, open for its answer. c: finished.
            tracker.receive("a")
            tracker.record(.attached(trackingId: "a", at: 9_600))
            tracker.receive("b", loadedAt: 9_700)
            tracker.receive("c", emitTimestamp: nil)
            tracker.record(.cancelled(trackingId: "c", reason: "recalled"))
            await before.storeDelayPassed(tracker)
            #expect(await before.storedSessions() == ["a"])
            #expect(await before.storedAcks().count == 5)
        }

        // As after kill -9: the same state directory, a new store and a new tracker.
        let after = try before.reopened()
        let transport = FakeTransport(.ack)
        try await after.withTracker { tracker in
            await tracker.recoverAfterRestart()
            // The closing `rendered` is written (with its session's end) before it may go.
            await tracker.writer.idle()
            #expect(await after.status()?["openSessions"] == 0)
            #expect(await after.status()?["pendingAcks"] == 6)
            tracker.setTransport(transport)
            #expect(transport.emitted.stages(of: "a") == ["received", "rendered"])
            #expect(transport.emitted.stages(of: "b") == ["received", "rendered"])
            #expect(transport.emitted.stages(of: "c") == ["received", "rendered"])
            let restart = try #require(transport.emitted.first { $0.trackingId == "a" && $0.stage == "rendered" }).context
            #expect(restart["status"] == "cancelled")
            #expect(restart["custom"]?["cancelReason"] == "daemon_restart")
            #expect(restart["timeline"]?["attached"] == 9_600)
            #expect(restart["receiveLatencyMs"] == 500)
            await after.storeDelayPassed(tracker)
            #expect(await after.storedAcks().isEmpty)
            #expect(await after.storedSessions().isEmpty)

            // Later events about the closed sessions send nothing.
            tracker.record(.loaded(trackingId: "a", at: 9_900))
            tracker.record(.answerAttempted(trackingId: "b", at: 9_900))
            #expect(transport.emitted.count == 6)
        }
    }

    @Test func aShownOverlayNotRenderedInTimeTimesOutOnTheTimer() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport(.ack)
        try await harness.withTracker(renderTimeout: .seconds(5)) { tracker in
            tracker.setTransport(transport)
            tracker.receive("t1")
            tracker.record(.shown(trackingId: "t1"))
            harness.timers.advance(by: .milliseconds(4_999))
            #expect(transport.emitted.stages(of: "t1") == ["received"])
            harness.timers.advance(by: .milliseconds(1))
            // Open past the store's delay, the session has a row: its `rendered` is written first.
            await tracker.writer.idle()
            let rendered = try #require(transport.emitted.last)
            #expect(rendered.stage == "rendered")
            #expect(rendered.context["status"] == "timeout")
            #expect(rendered.context["failureReason"] == "timeout")
            tracker.record(.loaded(trackingId: "t1", at: 9_900))
            #expect(transport.emitted.count == 2, "rendered goes once")
        }
    }

    /// Leaving a room waits for the acks to be delivered, within its limit.
    @Test func drainReturnsOnceDeliveredOrAtItsLimit() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport(.silent)
        try await harness.withTracker { tracker in
            tracker.setTransport(transport)
            tracker.receive("t1")
            let drainLong: @LoopActor @Sendable () async -> Void = { await tracker.drain(within: .seconds(60)) }
            await withDiscardingTaskGroup { group in
                group.addTask(operation: drainLong)
                await harness.timerSet(at: harness.timers.now + .seconds(60))
                transport.acknowledgeAll()
            }
            #expect(await harness.status()?["pendingAcks"] == 0)

            tracker.receive("t2")
            let drainShort: @LoopActor @Sendable () async -> Void = { await tracker.drain(within: .seconds(1)) }
            await withDiscardingTaskGroup { group in
                group.addTask(operation: drainShort)
                await harness.timerSet(at: harness.timers.now + .seconds(1))
                harness.timers.advance(by: .seconds(1))
            }
            #expect(await harness.status()?["pendingAcks"] == 1)
        }
    }
}
