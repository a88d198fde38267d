@testable import InteractiveDaemon
import JSONValue
import Testing

/// Payload shapes and latencies, with fixed timestamps: the clock reads 10 000 ms.
@Suite(.timeLimit(.minutes(1))) struct PayloadTests {
    private let base: [String: JSONValue] = [
        "profile": "overlay.legacyIframe", "transportMode": "legacyIframe", "sdkVersion": "9.9.9",
        "platform": "linux", "os": "Debian GNU/Linux 12", "deviceClass": "settopbox",
        "viewportWidth": 1920, "viewportHeight": 1080,
    ]

    private func context(_ stage: [String: JSONValue]) -> JSONValue {
        .object(base.merging(stage) { _, new in new })
    }

    private func payloads(_ harness: TrackingHarness) async throws -> [JSONValue] {
        try await harness.storedAcks().map(\.payload)
    }

    private func receive(_ service: TrackingService, emitTimestamp: Int64? = 9_000) async {
        await service.received(trackingId: "t1", timelineId: "tl1", overlayType: "minigame",
                               emitTimestamp: emitTimestamp, receivedAt: 9_500)
    }

    @Test func received() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service)
        let expected: JSONValue = [
            "trackingId": "t1", "event": "overlay", "stage": "received", "deviceId": "device-1",
            "clientContext": context([
                "emitTimestamp": 9_000, "receiveTimestamp": 9_500, "receiveLatencyMs": 500, "ackLatencyMs": 500,
                "timeline": ["received": 9_500, "ackSent": 10_000],
            ]),
        ]
        #expect(try await payloads(harness) == [expected])
    }

    @Test func receivedWithoutEmitTimestamp() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, emitTimestamp: nil)
        let received = try #require(try await payloads(harness).first)
        #expect(received.context["emitTimestamp"] == .null)
        #expect(received.context["receiveLatencyMs"] == .null)
    }

    /// A timestamp the subtraction cannot hold (the store or an older parser could carry one)
    /// gives a null latency instead of trapping.
    @Test func receiveLatencyThatOverflowsIsNull() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service, emitTimestamp: Int64.min)
        let received = try #require(try await payloads(harness).first)
        #expect(received.context["receiveLatencyMs"] == .null)
    }

    @Test func renderedSuccess() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service)
        await service.attached(trackingId: "t1", at: 9_600)
        await service.loaded(trackingId: "t1", at: 9_900)
        let expected: JSONValue = [
            "trackingId": "t1", "event": "overlay", "stage": "rendered", "deviceId": "device-1",
            "clientContext": context([
                "status": "success", "receiveLatencyMs": 500, "renderLatencyMs": 400, "ackLatencyMs": 100,
                "timeline": ["attached": 9_600, "renderStart": 9_600, "loadComplete": 9_900, "readyReceived": nil,
                             "ackSent": 10_000],
                "duration": nil, "overlayType": "minigame", "failureReason": nil, "failureStep": nil,
                "custom": ["cancelReason": nil],
            ]),
        ]
        #expect(try await payloads(harness).last == expected)
    }

    @Test func renderedCancelledMatchesTheBackendExample() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service)
        await service.attached(trackingId: "t1", at: 9_600)
        await service.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay")
        let expected: JSONValue = [
            "trackingId": "t1", "event": "overlay", "stage": "rendered", "deviceId": "device-1",
            "clientContext": context([
                "status": "cancelled", "receiveLatencyMs": 500, "renderLatencyMs": nil, "ackLatencyMs": 0,
                "timeline": ["attached": 9_600, "renderStart": 9_600, "loadComplete": nil, "readyReceived": nil,
                             "ackSent": 10_000],
                "duration": nil, "overlayType": "minigame", "failureReason": nil, "failureStep": nil,
                "custom": ["cancelReason": "replaced_by_new_overlay"],
            ]),
        ]
        #expect(try await payloads(harness).last == expected)
    }

    /// Seed 001: `rendered` carries the overlay's `duration` (seconds), also after a restart.
    @Test func renderedCarriesTheOverlaysDuration() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await service.received(trackingId: "t1", timelineId: "tl1", overlayType: "minigame", emitTimestamp: 9_000,
                               durationSec: 30, receivedAt: 9_500)
        await service.loaded(trackingId: "t1", at: 9_900)
        #expect(try await payloads(harness).last?.context["duration"] == 30)

        await service.received(trackingId: "t2", timelineId: "tl2", overlayType: "minigame", emitTimestamp: 9_000,
                               durationSec: 45, receivedAt: 9_500)
        await harness.settled()
        let reopened = try harness.reopened()
        await reopened.service().recoverAfterRestart()
        let closed = try #require(try await reopened.storedAcks().last { $0.trackingId == "t2" && $0.stage == .rendered })
        #expect(closed.payload.context["duration"] == 45)
    }

    /// `ackLatencyMs` runs to the moment the ack is sent, not to the moment it was queued.
    @Test func ackLatencyIsStampedWhenTheAckIsSent() {
        let queued = PendingAck(trackingId: "t1", stage: .rendered, payload: PendingAck.payload(
            trackingId: "t1", stage: .rendered, deviceId: "d",
            clientContext: ["ackLatencyMs": 100, "timeline": ["loadComplete": 9_900, "ackSent": 10_000]]), created: 10_000)
        let sent = queued.payload(sentAt: 12_500)
        #expect(sent.context["ackLatencyMs"] == 2_600)
        #expect(sent.context["timeline"] == ["loadComplete": 9_900, "ackSent": 12_500])
        #expect(sent["stage"] == "rendered")
        // The stored payload is unchanged: each send stamps its own moment.
        #expect(queued.payload.context["ackLatencyMs"] == 100)
        #expect(queued.payload(sentAt: Int64.min).context["ackLatencyMs"] == .null)
    }

    @Test func anAckSentLaterSaysHowLongItWaited() async throws {
        let harness = try TrackingHarness()
        let clock = ManualClock(10_000)
        let service = harness.service(clock: { clock.now })
        await receive(service)
        await harness.settled()
        clock.now = 13_000
        let transport = FakeTransport()
        await service.setTransport(transport)
        let emitted = await transport.waitForEmits(1)
        #expect(emitted.first?.context["ackLatencyMs"] == 3_500)
        #expect(emitted.first?.context["timeline"]?["ackSent"] == 13_000)
    }

    @Test func renderedFailed() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service)
        await service.failed(trackingId: "t1", reason: "HTTP 404", at: 9_800)
        let rendered = try #require(try await payloads(harness).last).context
        #expect(rendered["status"] == "failed")
        #expect(rendered["failureReason"] == "load_error")
        #expect(rendered["failureStep"] == "render")
        #expect(rendered["renderLatencyMs"] == .null)
        #expect(rendered["ackLatencyMs"] == 200)
        #expect(rendered["custom"] == ["cancelReason": nil, "detail": "HTTP 404"])
        #expect(rendered["timeline"]?["attached"] == .null)
    }

    @Test func answerStagesAfterLoad() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await receive(service)
        await service.attached(trackingId: "t1", at: 9_600)
        await service.loaded(trackingId: "t1", at: 9_700)
        await service.answerAttempted(trackingId: "t1", at: 9_950)
        await service.answerFailed(trackingId: "t1", reason: "api_EX400", step: "api", at: 9_990)
        let all = try await payloads(harness)
        #expect(all.compactMap(\.stage) == ["received", "rendered", "answer", "answer-failed"])
        let expectedAnswer: JSONValue = [
            "trackingId": "t1", "event": "overlay", "stage": "answer", "deviceId": "device-1",
            "clientContext": context([
                "actionType": "answer_submit", "actionResult": "attempted", "actionLatencyMs": 250, "ackLatencyMs": 50,
                "occurrenceId": "tl1", "overlayType": "minigame", "failureReason": nil, "failureStep": nil,
                "custom": [:],
                "timeline": ["received": 9_500, "attached": 9_600, "renderStart": 9_600, "loadComplete": 9_700,
                             "readyReceived": nil, "action": 9_950, "ackSent": 10_000],
            ]),
        ]
        #expect(all[2] == expectedAnswer)
        let failed = all[3].context
        #expect(failed["actionResult"] == "failure")
        #expect(failed["actionLatencyMs"] == 290)
        #expect(failed["ackLatencyMs"] == 10)
        #expect(failed["failureReason"] == "api_EX400")
        #expect(failed["failureStep"] == "api")
    }

    @Test func actionLatencyFallsBackToRenderStartThenReceive() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await service.received(trackingId: "a", timelineId: "tlA", overlayType: "lucky", emitTimestamp: nil, receivedAt: 9_000)
        await service.attached(trackingId: "a", at: 9_200)
        await service.answerSucceeded(trackingId: "a", at: 9_700)
        await service.received(trackingId: "b", timelineId: "tlB", overlayType: "predict", emitTimestamp: nil, receivedAt: 9_000)
        await service.answerAttempted(trackingId: "b", at: 9_700)
        let answers = try await payloads(harness).filter { $0.stage?.hasPrefix("answer") == true }
        #expect(answers.count == 2)
        #expect(answers[0].context["actionResult"] == "success")
        #expect(answers[0].context["actionLatencyMs"] == 500)
        #expect(answers[0].context["occurrenceId"] == "tlA")
        #expect(answers[0].context["overlayType"] == "lucky")
        #expect(answers[1].context["actionLatencyMs"] == 700)
        #expect(answers[1].context["occurrenceId"] == "tlB")
        #expect(answers[1].context["timeline"]?["readyReceived"] == .null)
    }

    @Test func viewportAndDeviceClassUpdatesApplyToLaterAcks() async throws {
        let harness = try TrackingHarness()
        let service = harness.service()
        await service.updateViewport(width: 1280, height: 720)
        await service.updateDeviceClass("kiosk")
        await receive(service)
        let received = try #require(try await payloads(harness).first).context
        #expect(received["viewportWidth"] == 1280)
        #expect(received["viewportHeight"] == 720)
        #expect(received["deviceClass"] == "kiosk")
    }
}
