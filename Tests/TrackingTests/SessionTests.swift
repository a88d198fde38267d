@testable import InteractiveDaemon
import JSONValue
import Testing

/// Stage rules: each stage once, nothing after the session finished, `rendered` settles once.
/// The services run offline, so every ack stays in the store where the test reads it, and their
/// timers on the harness's test clock.
@Suite(.timeLimit(.minutes(1))) struct SessionTests {
    private func stages(_ harness: TrackingHarness, _ trackingId: String) async throws -> [String] {
        try await harness.storedAcks().filter { $0.trackingId == trackingId }.map(\.stage.rawValue)
    }

    private func receive(_ service: TrackingService, _ trackingId: String, type: String = "minigame") async {
        await service.received(trackingId: trackingId, timelineId: "tl-\(trackingId)", overlayType: type,
                               emitTimestamp: 9_000, receivedAt: 9_500)
    }

    @Test func eachStageOnceAndNothingAfterFinish() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, "t1")
        await receive(service, "t1")
        await service.attached(trackingId: "t1", at: 9_600)
        await service.shown(trackingId: "t1")
        await service.loaded(trackingId: "t1", at: 9_700)
        await service.loaded(trackingId: "t1", at: 9_800)
        await service.failed(trackingId: "t1", reason: nil, at: 9_800)
        await service.answerAttempted(trackingId: "t1", at: 9_900)
        await service.answerAttempted(trackingId: "t1", at: 9_950)
        await service.answerSucceeded(trackingId: "t1", at: 9_990)
        // Finished: everything else is ignored, a repeated `received` included.
        await service.answerFailed(trackingId: "t1", reason: "api_false", step: nil, at: 9_999)
        await service.cancelled(trackingId: "t1", reason: "recalled")
        await receive(service, "t1")
        #expect(try await stages(harness, "t1") == ["received", "rendered", "answer", "answer-succeeded"])
        #expect(await harness.status()?["openSessions"] == 0)
        #expect(try await harness.storedSessions().isEmpty)
    }

    @Test func unknownIdsAreIgnored() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await service.shown(trackingId: "nope")
        await service.attached(trackingId: "nope", at: 1)
        await service.loaded(trackingId: "nope", at: 1)
        await service.failed(trackingId: "nope", reason: nil, at: 1)
        await service.cancelled(trackingId: "nope", reason: "recalled")
        await service.keptOffScreen(trackingId: "nope", reason: "not_targeted")
        await service.answerAttempted(trackingId: "nope", at: 1)
        await service.answerSucceeded(trackingId: "nope", at: 1)
        await service.answerFailed(trackingId: "nope", reason: "api_false", step: nil, at: 1)
        #expect(try await harness.storedAcks().isEmpty)
    }

    @Test func failedFinishesTheSession() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, "t1")
        await service.failed(trackingId: "t1", reason: "net::ERR_NAME_NOT_RESOLVED", at: 9_700)
        await service.answerAttempted(trackingId: "t1", at: 9_800)
        #expect(try await stages(harness, "t1") == ["received", "rendered"])
        #expect(await harness.status()?["openSessions"] == 0)
    }

    @Test func cancelledBeforeRenderSendsCancelledAndFinishes() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, "t1")
        await service.shown(trackingId: "t1")
        await service.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay")
        await service.loaded(trackingId: "t1", at: 9_800)
        let acks = try await harness.storedAcks()
        #expect(acks.map(\.stage) == [.received, .rendered])
        #expect(acks.last?.payload.context["status"] == "cancelled")
        #expect(acks.last?.payload.context["custom"]?["cancelReason"] == "replaced_by_new_overlay")
        #expect(await harness.status()?["openSessions"] == 0)
    }

    @Test func successKeepsTheSessionOpenAndALaterCancelSendsNothing() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, "t1")
        await service.loaded(trackingId: "t1", at: 9_700)
        #expect(await harness.status()?["openSessions"] == 1)
        #expect(try await harness.storedSessions() == ["t1"])
        await service.cancelled(trackingId: "t1", reason: "dismissed")
        await service.answerAttempted(trackingId: "t1", at: 9_900)
        #expect(try await stages(harness, "t1") == ["received", "rendered"])
        #expect(await harness.status()?["openSessions"] == 0)
        #expect(try await harness.storedSessions().isEmpty)
    }

    @Test func aCancelWhileAnAnswerIsPendingWaitsForItsResult() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, "t1")
        await service.loaded(trackingId: "t1", at: 9_700)
        await service.answerAttempted(trackingId: "t1", at: 9_800)
        await service.cancelled(trackingId: "t1", reason: "interactive_hide")
        await service.answerFailed(trackingId: "t1", reason: "network_error", step: "network", at: 9_900)
        #expect(try await stages(harness, "t1") == ["received", "rendered", "answer", "answer-failed"])
        #expect(await harness.status()?["openSessions"] == 0)
    }

    @Test func keptOffScreenSendsReceivedThenRenderedCancelled() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        for (index, reason) in ["not_targeted", "already_interacted", "already_on_screen", "invalid_overlay_state"].enumerated() {
            let trackingId = "k\(index)"
            await receive(service, trackingId)
            await service.keptOffScreen(trackingId: trackingId, reason: reason)
            await service.loaded(trackingId: trackingId, at: 9_900)
            let acks = try await harness.storedAcks().filter { $0.trackingId == trackingId }
            #expect(acks.map(\.stage) == [.received, .rendered])
            #expect(acks.last?.payload.context["status"] == "cancelled")
            #expect(acks.last?.payload.context["custom"]?["cancelReason"] == .string(reason))
        }
        #expect(await harness.status()?["openSessions"] == 0)
    }

    @Test func renderTimeoutSendsTimeoutOnceFromShown() async throws {
        let harness = try TrackingHarness()
        let clock = harness.clock
        let service = harness.service()
        await receive(service, "t1", type: "predict")
        // No timer before `shown` (a predict dialog not yet opened).
        await clock.advance(by: .seconds(60))
        #expect(try await stages(harness, "t1") == ["received"])
        await service.shown(trackingId: "t1")
        let shownAt = clock.now
        await clock.sleeps(count: 1)
        #expect(clock.deadlines == [shownAt + .seconds(5)])
        await clock.advance(by: .milliseconds(4_999))
        #expect(try await stages(harness, "t1") == ["received"])
        await clock.advance(by: .milliseconds(1))
        #expect(try await stages(harness, "t1") == ["received", "rendered"])
        await service.loaded(trackingId: "t1", at: 9_900)
        let rendered = try #require(try await harness.storedAcks().last)
        #expect(rendered.stage == .rendered)
        #expect(rendered.payload.context["status"] == "timeout")
        #expect(rendered.payload.context["failureReason"] == "timeout")
        #expect(rendered.payload.context["overlayType"] == "predict")
        #expect(try await stages(harness, "t1") == ["received", "rendered"])
        #expect(await harness.status()?["openSessions"] == 0)
    }

    @Test func renderedOnceWhenTimeoutAndLoadRace() async throws {
        let harness = try TrackingHarness()
        let clock = harness.clock
        let service = harness.service()
        let ids = (0..<30).map { "r\($0)" }
        for trackingId in ids {
            await receive(service, trackingId)
            await service.shown(trackingId: trackingId)
        }
        // One timer serves the 30 deadlines (all at the same instant).
        await clock.sleeps(count: 1)
        #expect(clock.deadlines == [clock.now + .seconds(5)])
        // The render timeout falls due while the overlays report that they loaded.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await clock.advance(by: .seconds(5)) }
            for trackingId in ids {
                group.addTask { await service.loaded(trackingId: trackingId, at: 9_800) }
            }
        }
        // Whatever timer is left falls due too.
        await clock.advance(by: .seconds(60))
        let acks = try await harness.storedAcks()
        #expect(acks.count == ids.count * 2)
        for trackingId in ids {
            #expect(acks.filter { $0.trackingId == trackingId }.map(\.stage) == [.received, .rendered])
        }
    }
}
