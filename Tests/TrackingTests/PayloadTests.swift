@testable import InteractiveDaemon
import JSONValue
import Runtime
import Testing

/// Payload shapes and latencies, as the connection carries them, with fixed timestamps: the
/// clock reads 10 000 ms.
@Suite @LoopActor struct PayloadTests {
    private let base: JSONObject = [
        "profile": "overlay.legacyIframe", "transportMode": "legacyIframe", "sdkVersion": "9.9.9",
        "platform": "linux", "os": "Debian GNU/Linux 12", "deviceClass": "settopbox",
        "viewportWidth": 1920, "viewportHeight": 1080,
    ]

    private func context(_ stage: JSONObject) -> JSONValue {
        .object(base.merging(stage) { _, new in new })
    }

    /// What a connected tracker emits for the events `body` records.
    private func payloads(_ body: (Tracker) -> Void) async throws -> [JSONValue] {
        let transport = FakeTransport(.ack)
        try await TrackingHarness().withTracker { tracker in
            tracker.setTransport(transport)
            body(tracker)
        }
        return transport.emitted
    }

    @Test func received() async throws {
        let expected: JSONValue = [
            "trackingId": "t1", "event": "overlay", "stage": "received", "deviceId": "device-1",
            "clientContext": context([
                "emitTimestamp": 9_000, "receiveTimestamp": 9_500, "receiveLatencyMs": 500, "ackLatencyMs": 500,
                "timeline": ["received": 9_500, "ackSent": 10_000],
            ]),
        ]
        #expect(try await payloads { $0.receive("t1", timelineId: "tl1") } == [expected])
    }

    @Test func receivedWithoutEmitTimestamp() async throws {
        let received = try #require(try await payloads { $0.receive("t1", emitTimestamp: nil) }.first)
        #expect(received.context["emitTimestamp"] == .null)
        #expect(received.context["receiveLatencyMs"] == .null)
    }

    /// A timestamp the subtraction cannot hold (the store or an older parser could carry one)
    /// gives a null latency instead of trapping.
    @Test func receiveLatencyThatOverflowsIsNull() async throws {
        let received = try #require(try await payloads { $0.receive("t1", emitTimestamp: Int64.min) }.first)
        #expect(received.context["receiveLatencyMs"] == .null)
    }

    @Test func renderedSuccess() async throws {
        let all = try await payloads { tracker in
            tracker.receive("t1")
            tracker.record(.attached(trackingId: "t1", at: 9_600))
            tracker.record(.loaded(trackingId: "t1", at: 9_900))
        }
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
        #expect(all.last == expected)
    }

    @Test func renderedCancelledMatchesTheBackendExample() async throws {
        let all = try await payloads { tracker in
            tracker.receive("t1")
            tracker.record(.attached(trackingId: "t1", at: 9_600))
            tracker.record(.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay"))
        }
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
        #expect(all.last == expected)
    }

    /// Seed 001: `rendered` carries the overlay's `duration` (seconds), also after a restart.
    @Test func renderedCarriesTheOverlaysDuration() async throws {
        #expect(try await payloads { $0.receive("t1", durationSec: 30, loadedAt: 9_900) }.last?.context["duration"] == 30)

        let before = try TrackingHarness()
        try await before.withTracker { tracker in
            tracker.receive("t2", durationSec: 45)
            await tracker.flushStore()
        }
        let after = try before.reopened()
        let transport = FakeTransport(.ack)
        try await after.withTracker { tracker in
            await tracker.recoverAfterRestart()
            await tracker.writer.idle()
            tracker.setTransport(transport)
        }
        let closed = try #require(transport.emitted.last { $0.trackingId == "t2" && $0.stage == "rendered" })
        #expect(closed.context["duration"] == 45)
        #expect(closed.context["custom"]?["cancelReason"] == "daemon_restart")
    }

    /// `ackLatencyMs` runs to the moment the ack is sent, not to the moment it was queued: the
    /// two members are patched in the text written when the stage was decided.
    @Test func ackLatencyIsStampedWhenTheAckIsSent() throws {
        var stamps = AckStamps()
        let text = PendingAck.payload(trackingId: "t1", stage: .rendered, deviceId: "d", stamps: &stamps) { writer, stamps in
            stamps.writeLatency(from: 9_900, ackSent: 10_000, to: &writer)
            writer.key("timeline")
            writer.beginObject()
            writer.member("loadComplete", 9_900)
            stamps.writeAckSent(10_000, to: &writer)
            writer.endObject()
        }
        let queued = PendingAck(trackingId: "t1", stage: .rendered, payload: text, stamps: stamps, created: 10_000)
        let sent = try JSONValue.parse(queued.payload(sentAt: 12_500))
        #expect(sent.context["ackLatencyMs"] == 2_600)
        #expect(sent.context["timeline"] == ["loadComplete": 9_900, "ackSent": 12_500])
        #expect(sent["stage"] == "rendered")
        // The queued text is unchanged: each send stamps its own moment.
        #expect(try JSONValue.parse(queued.payload).context["ackLatencyMs"] == 100)
        #expect(queued.payload(sentAt: 10_000) == text)
        #expect(try JSONValue.parse(queued.payload(sentAt: Int64.min)).context["ackLatencyMs"] == JSONValue.null)
    }

    /// An ack read back from the store has no stamps: it is parsed and written again.
    @Test func anAckReadBackFromTheStoreIsStampedToo() throws {
        let stored = PendingAck(trackingId: "t1", stage: .received, payload: [
            "trackingId": "t1", "stage": "received",
            "clientContext": ["ackLatencyMs": 100, "timeline": ["received": 9_900, "ackSent": 10_000]]], created: 10_000)
        let sent = try JSONValue.parse(stored.payload(sentAt: 12_500))
        #expect(sent.context["ackLatencyMs"] == 2_600)
        #expect(sent.context["timeline"] == ["received": 9_900, "ackSent": 12_500])
    }

    @Test func anAckSentLaterSaysHowLongItWaited() async throws {
        let harness = try TrackingHarness()
        let transport = FakeTransport()
        try await harness.withTracker { tracker in
            tracker.receive("t1")
            harness.clock.now = 13_000
            tracker.setTransport(transport)
        }
        #expect(transport.emitted.first?.context["ackLatencyMs"] == 3_500)
        #expect(transport.emitted.first?.context["timeline"]?["ackSent"] == 13_000)
    }

    @Test func renderedFailed() async throws {
        let all = try await payloads { tracker in
            tracker.receive("t1")
            tracker.record(.failed(trackingId: "t1", reason: "HTTP 404", at: 9_800))
        }
        let rendered = try #require(all.last).context
        #expect(rendered["status"] == "failed")
        #expect(rendered["failureReason"] == "load_error")
        #expect(rendered["failureStep"] == "render")
        #expect(rendered["renderLatencyMs"] == .null)
        #expect(rendered["ackLatencyMs"] == 200)
        #expect(rendered["custom"] == ["cancelReason": nil, "detail": "HTTP 404"])
        #expect(rendered["timeline"]?["attached"] == .null)
    }

    @Test func answerStagesAfterLoad() async throws {
        let all = try await payloads { tracker in
            tracker.receive("t1", timelineId: "tl1")
            tracker.record(.attached(trackingId: "t1", at: 9_600))
            tracker.record(.loaded(trackingId: "t1", at: 9_700))
            tracker.record(.answerAttempted(trackingId: "t1", at: 9_950))
            tracker.record(.answerFailed(trackingId: "t1", reason: "api_EX400", step: "api", at: 9_990))
        }
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
        try #require(all.count == 4)
        #expect(all[2] == expectedAnswer)
        let failed = all[3].context
        #expect(failed["actionResult"] == "failure")
        #expect(failed["actionLatencyMs"] == 290)
        #expect(failed["ackLatencyMs"] == 10)
        #expect(failed["failureReason"] == "api_EX400")
        #expect(failed["failureStep"] == "api")
    }

    @Test func actionLatencyFallsBackToRenderStartThenReceive() async throws {
        let all = try await payloads { tracker in
            tracker.receive("a", timelineId: "tlA", overlayType: "lucky", emitTimestamp: nil, receivedAt: 9_000)
            tracker.record(.attached(trackingId: "a", at: 9_200))
            tracker.record(.answerSucceeded(trackingId: "a", at: 9_700))
            tracker.receive("b", timelineId: "tlB", overlayType: "predict", emitTimestamp: nil, receivedAt: 9_000)
            tracker.record(.answerAttempted(trackingId: "b", at: 9_700))
        }
        let answers = all.filter { $0.stage?.hasPrefix("answer") == true }
        try #require(answers.count == 2)
        #expect(answers[0].context["actionResult"] == "success")
        #expect(answers[0].context["actionLatencyMs"] == 500)
        #expect(answers[0].context["occurrenceId"] == "tlA")
        #expect(answers[0].context["overlayType"] == "lucky")
        #expect(answers[1].context["actionLatencyMs"] == 700)
        #expect(answers[1].context["occurrenceId"] == "tlB")
        #expect(answers[1].context["timeline"]?["readyReceived"] == .null)
    }

    @Test func viewportAndDeviceClassUpdatesApplyToLaterAcks() async throws {
        let received = try #require(try await payloads { tracker in
            tracker.updateViewport(width: 1280, height: 720)
            tracker.updateDeviceClass("kiosk")
            tracker.receive("t1")
        }.first).context
        #expect(received["viewportWidth"] == 1280)
        #expect(received["viewportHeight"] == 720)
        #expect(received["deviceClass"] == "kiosk")
    }
}
