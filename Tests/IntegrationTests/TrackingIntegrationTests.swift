import Foundation
import IPCProtocol
import JSONValue
import Testing

/// emit-ack tracking of live overlays, as the reference backend records it (`/_admin/acks`).
@Suite struct TrackingIntegrationTests {
    @Test func receivedThenRenderedSuccessWithTheClientContext() async throws {
        let live = try await LiveFixture()
        let version = try await live.player.call("daemon.hello", ["client": "tracking-test", "protocol": 1])["version"]
        let overlayId = try await live.show(live.backend.quiz("tl-ok"), trackingId: "trk-ok").overlayId

        let received = try await live.waitForAck("trk-ok", "received")
        #expect(received["event"] == "overlay")
        #expect(received["acked"] == true)
        #expect(received["problems"]?.arrayValue?.isEmpty != false, "\(received["problems"] ?? .null)")
        let payload = try #require(received["payload"])
        #expect(payload["trackingId"] == "trk-ok")
        #expect(payload["event"] == "overlay")
        #expect(payload["stage"] == "received")
        let deviceId = try #require(payload["deviceId"]?.stringValue)
        #expect(!deviceId.isEmpty)
        if let machineId = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8) {
            let raw = machineId.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!raw.isEmpty && deviceId.lowercased() != raw.lowercased() && !deviceId.contains(raw))
        }
        let context = try #require(payload["clientContext"])
        #expect(context["profile"] == "overlay.legacyIframe")
        #expect(context["transportMode"] == "legacyIframe")
        #expect(context["platform"] == "linux")
        #expect(context["os"]?.stringValue?.isEmpty == false)
        #expect(context["sdkVersion"] == version)
        #expect(context["deviceClass"] == "settopbox")
        #expect(context["viewportWidth"] == 1920)
        #expect(context["viewportHeight"] == 1080)
        #expect(context["receiveLatencyMs"]?.doubleValue != nil)

        _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        let rendered = try await live.waitForAck("trk-ok", "rendered")
        let renderedContext = try #require(rendered["payload"]?["clientContext"])
        #expect(rendered["status"] == "success")
        #expect(rendered["payload"]?["deviceId"] == .string(deviceId))
        #expect(renderedContext["status"] == "success")
        #expect(renderedContext["overlayType"] == "minigame")
        #expect(renderedContext["receiveLatencyMs"]?.doubleValue != nil)
        #expect(renderedContext["renderLatencyMs"]?.doubleValue != nil)
        #expect(renderedContext["failureReason"] == .null)
        let timeline = try #require(renderedContext["timeline"])
        #expect(timeline["readyReceived"] == .null)
        #expect(timeline["attached"]?.doubleValue != nil)
        #expect(timeline["renderStart"]?.doubleValue != nil)
        #expect(timeline["loadComplete"]?.doubleValue != nil)
        #expect(timeline["ackSent"]?.doubleValue != nil)
        #expect(try await live.backend.ackStages("trk-ok") == ["received", "rendered"])

        // The player's viewport goes into the next acks.
        _ = try await live.player.call("player.viewport", ["width": 1280, "height": 720])
        try await live.show(live.backend.quiz("tl-ok-2"), trackingId: "trk-ok-2")
        let resized = try await live.waitForAck("trk-ok-2", "received")["payload"]?["clientContext"]
        #expect(resized?["viewportWidth"] == 1280)
        #expect(resized?["viewportHeight"] == 720)
    }

    @Test func aRenderTimeoutIsReportedOnce() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-slow"), trackingId: "trk-timeout").overlayId
        let timedOut = try await live.waitForAck("trk-timeout", "rendered", timeoutMs: 12_000)
        #expect(timedOut["status"] == "timeout")
        #expect(timedOut["payload"]?["clientContext"]?["failureReason"] == "timeout")
        // The player reports it loaded after all: nothing more is sent.
        _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        try await live.waitForAcksDelivered()
        #expect(try await live.backend.ackStages("trk-timeout") == ["received", "rendered"])
    }

    @Test func aLoadFailureIsReported() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-broken"), trackingId: "trk-failed").overlayId
        _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "failed", "reason": "net::ERR_FAILED"])
        let failed = try await live.waitForAck("trk-failed", "rendered")
        let context = failed["payload"]?["clientContext"]
        #expect(failed["status"] == "failed")
        #expect(context?["failureReason"] == "load_error")
        #expect(context?["failureStep"] == "render")
        // The first report wins.
        let second = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        #expect(second["recorded"] == false)
        try await live.waitForAcksDelivered()
        #expect(try await live.backend.ackStages("trk-failed") == ["received", "rendered"])
    }

    @Test func aReplacedOverlayIsCancelled() async throws {
        let live = try await LiveFixture()
        try await live.show(live.backend.quiz("tl-old"), trackingId: "trk-old")
        try await live.show(live.backend.quiz("tl-new"), trackingId: "trk-new")
        let cancelled = try await live.waitForAck("trk-old", "rendered")
        #expect(cancelled["status"] == "cancelled")
        #expect(cancelled["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "replaced_by_new_overlay")
        #expect(try await live.acks("trk-new", stage: "rendered").isEmpty)
    }

    @Test func overlaysKeptOffScreenAreCancelledRightAfterReceived() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let backend = live.backend
        let answeredId = try await live.showLoaded(backend.quiz("tl-answered"), trackingId: "trk-first")
        #expect(try await live.answer(answeredId)["status"] == "success")
        try await live.show(backend.quiz("tl-showing"), trackingId: "trk-showing")

        let cases: [(trackingId: String, overlay: JSONValue, reason: String)] = [
            ("trk-nt", backend.quiz("tl-iphone", targets: ["iphone"]), "not_targeted"),
            ("trk-ai", backend.quiz("tl-answered"), "already_interacted"),
            ("trk-aos", backend.quiz("tl-showing"), "already_on_screen"),
            ("trk-inv", backend.quiz("tl-nine", alignment: 9), "invalid_overlay_state"),
        ]
        for (trackingId, overlay, _) in cases { try await backend.emitOverlay(room: "m1", overlay, trackingId: trackingId) }
        for (trackingId, _, reason) in cases {
            let rendered = try await live.waitForAck(trackingId, "rendered")
            #expect(rendered["status"] == "cancelled", "\(trackingId)")
            #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == .string(reason), "\(trackingId)")
            let stages = try await live.acks(trackingId)
            #expect(stages.compactMap { $0["stage"]?.stringValue } == ["received", "rendered"], "\(trackingId)")
        }
        #expect(try await live.status()["overlays"]?.arrayValue?.compactMap { $0["timelineId"]?.stringValue } == ["tl-showing"])
    }

    @Test func aRepeatedEmitOfTheOverlayOnScreenLeavesItsSessionAlone() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-twice"), trackingId: "trk-twice").overlayId
        try await live.waitForAck("trk-twice", "received")
        // The server sends the same emit again (same tracking id), wrapped or flat: not shown again,
        // and the session of the overlay on screen goes on.
        try await live.backend.emitOverlay(room: "m1", live.backend.quiz("tl-twice"), trackingId: "trk-twice")
        try await live.backend.emitOverlay(room: "m1", live.backend.quiz("tl-twice"), trackingId: "trk-twice", shape: "flat",
                                     event: "ex-overlay")
        try await live.backend.emitOverlay(room: "m1", live.backend.quiz("tl-next"), trackingId: "trk-next", event: "ex-overlay")
        let replaced = try await live.player.waitForEvent("overlay.hide")
        #expect(replaced.data["overlayId"] == .string(overlayId))
        #expect(replaced.data["reason"] == "replaced_by_new_overlay")
        let rendered = try await live.waitForAck("trk-twice", "rendered")
        #expect(rendered["status"] == "cancelled")
        #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "replaced_by_new_overlay")
        try await live.waitForAcksDelivered()
        #expect(try await live.backend.ackStages("trk-twice") == ["received", "rendered"])
    }

    @Test func answerStagesFollowTheRender() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let overlayId = try await live.showLoaded(live.backend.quiz("tl-good"), trackingId: "trk-good")
        #expect(try await live.answer(overlayId)["status"] == "success")
        let succeeded = try await live.waitForAck("trk-good", "answer-succeeded")
        #expect(succeeded["payload"]?["clientContext"]?["actionResult"] == "success")
        #expect(try await live.backend.ackStages("trk-good") == ["received", "rendered", "answer", "answer-succeeded"])
        #expect(try await live.acks("trk-good", stage: "answer").first?["payload"]?["clientContext"]?["actionResult"] == "attempted")

        try await live.backend.fault(["actionsReply": "EX400"])
        let refusedId = try await live.showLoaded(live.backend.quiz("tl-bad"), trackingId: "trk-bad")
        #expect(try await live.answer(refusedId)["reason"] == "api_EX400")
        let failed = try await live.waitForAck("trk-bad", "answer-failed")
        #expect(failed["payload"]?["clientContext"]?["failureReason"] == "api_EX400")
        #expect(failed["payload"]?["clientContext"]?["actionResult"] == "failure")
        #expect(try await live.backend.ackStages("trk-bad") == ["received", "rendered", "answer", "answer-failed"])
    }

    @Test func aPlayerThatAttachedAndLeftTakesItsOverlayAway() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-gone"), trackingId: "trk-gone").overlayId
        do {
            let renderer = try await live.daemon.client()
            _ = try await renderer.call("overlay.attached", ["overlayId": .string(overlayId)])
        }  // The renderer's connection closes here.
        let hidden = try await live.player.waitForEvent("overlay.hide")
        #expect(hidden.data["overlayId"] == .string(overlayId))
        #expect(hidden.data["reason"] == "player_disconnected")
        let cancelled = try await live.waitForAck("trk-gone", "rendered")
        #expect(cancelled["status"] == "cancelled")
        #expect(cancelled["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "player_disconnected")
        #expect(cancelled["payload"]?["clientContext"]?["timeline"]?["attached"]?.doubleValue != nil)
    }

    /// A server that never acknowledges (BACKEND.md allows it): each ack goes out once, at once,
    /// and counts as delivered once the heartbeat proves the connection carried it (the
    /// server's next ping after the pong that followed it), here within a second or two.
    @Test func anAckTheServerNeverAcknowledgesIsSentOnceAndDeliveredByTheHeartbeat() async throws {
        let backend = try await ReferenceBackend(arguments: ["--ping-interval", "1"])
        let live = try await LiveFixture(backend: backend)
        try await backend.fault(["ackEmitAck": false])
        let overlayId = try await live.show(backend.quiz("tl-noack"), trackingId: "trk-noack").overlayId
        let received = try await live.waitForAck("trk-noack", "received")
        #expect(received["acked"] == false)
        _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        let rendered = try await live.waitForAck("trk-noack", "rendered")
        #expect(rendered["acked"] == false, "the render report does not wait for the unacknowledged received")
        try await live.waitForAcksDelivered(timeoutMs: 10_000)
        #expect(try await backend.ackStages("trk-noack") == ["received", "rendered"])
        #expect(try await live.status()["tracking"]?["delivered"] == 2)
    }

    /// Issue 21, item 9: a connection that goes silent (the server neither reads nor writes, the
    /// TCP connection stays open) proves nothing: an ack decided meanwhile is not counted as
    /// delivered, and arrives after the reconnect, each stage once at the backend.
    @Test func acksDecidedOnASilentConnectionArriveOnceAfterTheReconnect() async throws {
        let backend = try await ReferenceBackend(arguments: ["--ping-interval", "1", "--ping-timeout", "2"])
        let live = try await LiveFixture(config: ["reconnect": ["baseMs": 50, "capMs": 200]], backend: backend)
        let overlayId = try await live.show(backend.quiz("tl-silent"), trackingId: "trk-silent").overlayId
        _ = try await live.waitForAck("trk-silent", "received")
        try await live.waitForAcksDelivered()
        try await backend.fault(["stopPings": true])
        // Decided while the connection looks up but carries nothing.
        _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        #expect(try await live.status()["tracking"]?["delivered"] == 1, "nothing proves the rendered ack reached the server")
        // pingInterval + pingTimeout without a ping: the daemon gives the connection up and
        // connects again (a new connection is not silenced).
        try await live.player.waitForEvent("connection.state", timeoutMs: 20_000) { $0["state"] == "reconnecting" }
        try await live.player.waitForEvent("connection.state", timeoutMs: 20_000) { $0["state"] == "connected" }
        let rendered = try await live.waitForAck("trk-silent", "rendered", timeoutMs: 10_000)
        #expect(rendered["payload"]?["clientContext"]?["status"] == "success")
        try await live.waitForAcksDelivered(timeoutMs: 10_000)
        #expect(try await backend.ackStages("trk-silent") == ["received", "rendered"])
    }

    @Test func anUnacknowledgedAckIsSentAgainAfterTheConnectionDropped() async throws {
        let live = try await LiveFixture(config: ["reconnect": ["baseMs": 50, "capMs": 200]])
        try await live.backend.fault(["ackEmitAck": false])
        try await live.show(live.backend.quiz("tl-drop"), trackingId: "trk-drop")
        let first = try await live.waitForAck("trk-drop", "received")
        #expect(first["acked"] == false)
        // The connection drops before the server acked it: the ack goes out again on the next one.
        try await live.backend.fault(["ackEmitAck": true, "dropSockets": true])
        try await live.player.waitForEvent("room.state") { $0["state"] == "joined" }
        let again = try await live.backend.waitForRecords("acks", "trackingId=trk-drop&stage=received") { $0.count >= 2 }
        #expect(again.count == 2)
        #expect(again[1]["acked"] == true)
        #expect(again[1]["sid"] != first["sid"])
        // The same ack, stamped with the moment of its own sending.
        #expect(unstamped(again[1]["payload"]) == unstamped(first["payload"]))
        let firstSent = try #require(first["payload"]?["clientContext"]?["timeline"]?["ackSent"]?.doubleValue)
        let againSent = try #require(again[1]["payload"]?["clientContext"]?["timeline"]?["ackSent"]?.doubleValue)
        #expect(againSent > firstSent)
        let latency = try #require(again[1]["payload"]?["clientContext"]?["ackLatencyMs"]?.doubleValue)
        let received = try #require(again[1]["payload"]?["clientContext"]?["timeline"]?["received"]?.doubleValue)
        #expect(latency == againSent - received)
    }

    /// An emit-ack payload without what each sending stamps (`ackLatencyMs`, `timeline.ackSent`).
    private func unstamped(_ payload: JSONValue?) -> JSONValue? {
        guard var members = payload?.objectValue, var context = members["clientContext"]?.objectValue else { return payload }
        context["ackLatencyMs"] = nil
        var timeline = context["timeline"]?.objectValue ?? [:]
        timeline["ackSent"] = nil
        context["timeline"] = .object(timeline)
        members["clientContext"] = .object(context)
        return .object(members)
    }
}
