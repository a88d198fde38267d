@testable import InteractiveDaemon
import JSONValue
import Testing

/// At-least-once delivery: stored before sent, deleted once acknowledged (or unacknowledged for
/// the ack timeout on a live connection), sent again after a drop or a restart.
@Suite(.timeLimit(.minutes(1))) struct DeliveryTests {
    private func openAndRender(_ service: TrackingService, _ trackingId: String) async {
        await service.received(trackingId: trackingId, timelineId: "tl-\(trackingId)", overlayType: "minigame",
                               emitTimestamp: 9_000, receivedAt: 9_500)
        await service.loaded(trackingId: trackingId, at: 9_700)
    }

    @Test func offlineAcksAreStored() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await openAndRender(service, "t1")
        #expect(try await harness.storedAcks().map(\.stage) == [.received, .rendered])
        let status = await harness.status()
        #expect(status?["pendingAcks"] == 2)
        #expect(status?["delivered"] == 0)
        #expect(status?["connected"] == false)
    }

    @Test func setTransportFlushesInOrderAndAckedAcksAreNeverResent() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await openAndRender(service, "t1")
        await openAndRender(service, "t2")
        await service.answerAttempted(trackingId: "t1", at: 9_800)
        let transport = FakeTransport(.ack)
        await service.setTransport(transport)
        let emitted = await transport.waitForEmits(5)
        #expect(emitted.count == 5)
        #expect(emitted.stages(of: "t1") == ["received", "rendered", "answer"])
        #expect(emitted.stages(of: "t2") == ["received", "rendered"])
        #expect(await transport.timeouts.allSatisfy { $0 == .seconds(10) })
        await harness.delivered(by: service)
        #expect(try await harness.storedAcks().isEmpty)
        #expect(await harness.status()?["delivered"] == 5)
        #expect(await harness.status()?["pendingAcks"] == 0)

        // A reconnect sends nothing already acknowledged; new stages go out at once.
        await service.setTransport(nil)
        let next = FakeTransport(.ack)
        await service.setTransport(next)
        await service.answerSucceeded(trackingId: "t1", at: 9_900)
        let after = await next.waitForEmits(1)
        await harness.delivered(by: service)
        #expect(after.compactMap(\.stage) == ["answer-succeeded"])
        #expect(await next.emitted.count == 1)
        #expect(await transport.emitted.count == 5)
    }

    @Test func manySessionsFlushThroughTheLimitedLanes() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        let ids = (0..<25).map { "s\($0)" }
        for trackingId in ids { await openAndRender(service, trackingId) }
        let transport = FakeTransport(.ack)
        await service.setTransport(transport)
        let emitted = await transport.waitForEmits(ids.count * 2)
        #expect(emitted.count == ids.count * 2)
        for trackingId in ids { #expect(emitted.stages(of: trackingId) == ["received", "rendered"]) }
        await harness.delivered(by: service)
        #expect(try await harness.storedAcks().isEmpty)
    }

    @Test func unacknowledgedOnALiveConnectionCountsAsDeliveredAfterTheTimeout() async throws {
        let harness = try TrackingHarness()
        let service = harness.service(ackTimeout: .seconds(2))
        let transport = FakeTransport(.silent(harness.clock))
        await service.setTransport(transport)
        await service.received(trackingId: "t1", timelineId: "tl1", overlayType: "minigame", emitTimestamp: nil,
                               receivedAt: 9_500)
        #expect(await transport.waitForEmits(1).count == 1)
        #expect(await transport.timeouts == [.seconds(2)])
        #expect(try await harness.storedAcks().count == 1)
        #expect(await harness.status()?["delivered"] == 0)
        // The server stays silent for the whole timeout.
        await harness.clock.sleeps(count: 1)
        await harness.clock.advance(by: .seconds(2))
        await harness.delivered(by: service)
        #expect(try await harness.storedAcks().isEmpty)
        #expect(await harness.status()?["delivered"] == 1)
        #expect(await transport.emitted.count == 1)
    }

    @Test func acksOfADroppedConnectionAreSentAgainAfterTheReconnect() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        let first = FakeTransport(.hold)
        await service.setTransport(first)
        await openAndRender(service, "t1")
        #expect(await first.waitForEmits(1).compactMap(\.stage) == ["received"])
        await service.setTransport(nil)
        // The held emit ends with `notConnected`; a lane of a replaced connection changes nothing.
        await first.drop()
        await first.waitForReturns(1)
        #expect(try await harness.storedAcks().map(\.stage) == [.received, .rendered])
        #expect(await harness.status()?["delivered"] == 0)

        // A transport that reports no connection keeps them too.
        let offline = FakeTransport(.offline)
        await service.setTransport(offline)
        #expect(await offline.waitForEmits(1).count == 1)
        // Returns once the lane found no connection: the service is offline.
        await harness.delivered(by: service)
        #expect(await harness.status()?["connected"] == false)
        await service.answerAttempted(trackingId: "t1", at: 9_800)
        #expect(await offline.emitted.count == 1)
        #expect(try await harness.storedAcks().count == 3)

        let second = FakeTransport(.ack)
        await service.setTransport(second)
        #expect(await second.waitForEmits(3).stages(of: "t1") == ["received", "rendered", "answer"])
        await harness.delivered(by: service)
        #expect(try await harness.storedAcks().isEmpty)
        #expect(await first.emitted.count == 1)
    }

    @Test func aRestartDeliversStoredAcksAndClosesOpenSessions() async throws {
        let before = try TrackingHarness()
        let old = before.service()
        // a: open, not rendered. b: rendered success, open. c: finished.
        await old.received(trackingId: "a", timelineId: "tlA", overlayType: "minigame", emitTimestamp: 9_000, receivedAt: 9_500)
        await old.attached(trackingId: "a", at: 9_600)
        await openAndRender(old, "b")
        await old.received(trackingId: "c", timelineId: "tlC", overlayType: "minigame", emitTimestamp: nil, receivedAt: 9_500)
        await old.cancelled(trackingId: "c", reason: "recalled")
        #expect(try await before.storedSessions().sorted() == ["a", "b"])

        // As after kill -9: the same state directory, a new store and a new service.
        let after = try before.reopened()
        let service = after.service()
        await service.recoverAfterRestart()
        #expect(try await after.storedSessions().isEmpty)
        #expect(try await after.storedAcks().count == 6)
        #expect(await after.status()?["openSessions"] == 0)
        #expect(await after.status()?["pendingAcks"] == 6)

        let transport = FakeTransport(.ack)
        await service.setTransport(transport)
        let emitted = await transport.waitForEmits(6)
        #expect(emitted.count == 6)
        #expect(emitted.stages(of: "a") == ["received", "rendered"])
        #expect(emitted.stages(of: "b") == ["received", "rendered"])
        #expect(emitted.stages(of: "c") == ["received", "rendered"])
        let restart = try #require(emitted.first { $0.trackingId == "a" && $0.stage == "rendered" }).context
        #expect(restart["status"] == "cancelled")
        #expect(restart["custom"]?["cancelReason"] == "daemon_restart")
        #expect(restart["timeline"]?["attached"] == 9_600)
        #expect(restart["receiveLatencyMs"] == 500)
        await after.delivered(by: service)
        #expect(try await after.storedAcks().isEmpty)

        // Later calls about the closed sessions send nothing.
        await service.loaded(trackingId: "a", at: 9_900)
        await service.answerAttempted(trackingId: "b", at: 9_900)
        await after.delivered(by: service)
        #expect(await transport.emitted.count == 6)
    }
}
