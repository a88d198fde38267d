import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Predict, lucky number and leaderboard (issue 7).
@Suite struct PredictTests {
    /// A daemon in live room m1 with a subscribed player; keep it in a variable (the daemon
    /// stops when it is released).
    struct Room {
        let daemon: DaemonProcess
        let player: DaemonConnection
    }

    private func liveRoom(_ backend: ReferenceBackend, tenant: String = "onlivev2", directory: TemporaryDirectory? = nil,
                          login: Bool = true) async throws -> Room {
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags(tenant: tenant), directory: directory)
        let player = try await daemon.client()
        if login { _ = try await player.call("session.login", ["token": "token-alice", "userId": "alice"]) }
        try await player.subscribe(["predict.", "overlay.", "answer."])
        #expect(try await player.call("room.join", ["mediaId": "m1"])["state"] == "joined")
        return Room(daemon: daemon, player: player)
    }

    private func predictOverlay(_ backend: ReferenceBackend, _ timelineId: String, type: Int = 3) -> JSONValue {
        let page = type == 5 ? "lucky" : "predict"
        return ["timelineId": .string(timelineId), "typeTimeline": .number(Double(type)),
                "url": .string("\(backend.baseURL)/templates/\(page).html?id=\(timelineId)"),
                "position": ["alignment": 4, "width": 60, "height": 60], "duration": 0, "targets": ["all"]]
    }

    @Test func predictOverlayShowsAButtonThatFadesAfterFiveSeconds() async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend)
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p1"), trackingId: "tp1")
        let button = try await room.player.waitForEvent("predict.button")
        #expect(button.data["timelineId"] == "p1")
        #expect(button.data["kind"] == "predict")
        #expect(button.data["visible"] == true)
        #expect(button.data["image"] == "power")
        #expect(button.data["opacity"] == 1)
        let shownAt = Date()
        let faded = try await room.player.waitForEvent("predict.button", timeoutMs: 9000) { $0["timelineId"] == "p1" }
        #expect(faded.data["opacity"] == 0.5)
        #expect(Date().timeIntervalSince(shownAt) > 4)
        // Received on arrival; nothing rendered before the dialog opens.
        let acks = try await backend.waitForRecords("acks", "trackingId=tp1") { !$0.isEmpty }
        #expect(acks.map { $0["stage"] } == ["received"])
    }

    @Test func buttonDataSwapsImagesAndVisibility() async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend)
        try await backend.emit(room: "m1", event: "action-button-predict", [
            "timelineId": "p2", "typeTimeline": 3, "imageIdle": "https://cdn/idle.gif", "imagePower": "https://cdn/power.gif",
            "visible": true,
        ])
        let idle = try await room.player.waitForEvent("predict.button")
        #expect(idle.data["image"] == "idle")
        #expect(idle.data["imageIdle"] == "https://cdn/idle.gif")
        #expect(idle.data["imagePower"] == "https://cdn/power.gif")
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p2"))
        #expect(try await room.player.waitForEvent("predict.button").data["image"] == "power")
        try await backend.emit(room: "m1", event: "action-button-predict", ["timelineId": "p2", "typeTimeline": 3, "visible": false])
        let hidden = try await room.player.waitForEvent("predict.button") { $0["visible"] == false }
        #expect(hidden.data["imageIdle"] == "https://cdn/idle.gif")
    }

    @Test(arguments: ["vtvlive", "onlivetv", "VTVprime"])
    func tenantsWithoutButtonsGetNone(tenant: String) async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend, tenant: tenant)
        try await backend.emit(room: "m1", event: "action-button-predict", ["timelineId": "p3", "typeTimeline": 3, "visible": true])
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p3"))
        // Events are ordered: a minigame shown after them proves no button event was sent.
        try await backend.emitOverlay(room: "m1", backend.quiz("after"))
        let next = try await room.player.waitForEvent("overlay.show")
        #expect(next.data["timelineId"] == "after")
        // Nor in the status or a new subscription's snapshot (issue 21, item 1: the status listed
        // a visible button, which players drew after any resubscribe).
        #expect(try await room.player.call("daemon.status")["predict"] == [])
        let later = try await room.daemon.client()
        #expect(try await later.subscribe(["predict."])["snapshot"]?["predict"] == [])
        // The dialog still opens on request.
        #expect(try await room.player.call("predict.open", ["timelineId": "p3"])["kind"] == "predict")
    }

    /// Issue 21, item 8: a predict or lucky overlay without `position` lights its button and its
    /// dialog opens at the centre over the whole video area (it was kept off screen, invalid).
    @Test(arguments: [3, 5])
    func predictAndLuckyWithoutPositionOpenCentredFullSize(type: Int) async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend)
        var members = predictOverlay(backend, "np\(type)", type: type).objectValue ?? [:]
        members["position"] = nil
        try await backend.emitOverlay(room: "m1", .object(members), trackingId: "tnp\(type)")
        #expect(try await room.player.waitForEvent("predict.button").data["visible"] == true)
        _ = try await room.player.call("predict.open", ["timelineId": .string("np\(type)")])
        let show = try await room.player.waitForEvent("overlay.show")
        #expect(show.data["placement"] == ["location": 4, "widthPct": 100, "heightPct": 100])
        let acks = try await backend.records("acks", "trackingId=tnp\(type)")
        #expect(!acks.contains { $0["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "invalid_overlay_state" })
    }

    @Test func predictOpenShowsTheDialogAndStartsRenderTracking() async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend)
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p4"), trackingId: "tp4")
        try await room.player.waitForEvent("predict.button")
        let opened = try await room.player.call("predict.open", ["timelineId": "p4"])
        let show = try await room.player.waitForEvent("overlay.show")
        #expect(show.data["kind"] == "predict")
        #expect(show.data["overlayId"] == opened["overlayId"])
        #expect(show.data["url"]?.stringValue?.contains("predict.html?id=p4&logged=true") == true)
        let overlayId = try #require(opened["overlayId"])
        _ = try await room.player.call("overlay.attached", ["overlayId": overlayId])
        _ = try await room.player.call("overlay.rendered", ["overlayId": overlayId, "status": "loaded"])
        let acks = try await backend.waitForRecords("acks", "trackingId=tp4") { $0.count == 2 }
        #expect(acks.map { $0["stage"] } == ["received", "rendered"])
        #expect(acks[1]["payload"]?["clientContext"]?["status"] == "success")
        #expect(acks[1]["payload"]?["clientContext"]?["overlayType"] == "predict")
        // The dialog's own bridge messages reveal and close it.
        _ = try await room.player.call("overlay.bridge", ["overlayId": overlayId, "message": ["type": "INTERACTIVE_OPEN_ANALYTICS"]])
        try await room.player.waitForEvent("overlay.reveal")
        _ = try await room.player.call("overlay.bridge", ["overlayId": overlayId, "message": ["type": "INTERACTIVE_CLOSE_ANALYTICS"]])
        #expect(try await room.player.waitForEvent("overlay.hide").data["reason"] == "interactive_hide")
        await #expect(throws: IPCClientError.self) { try await room.player.call("predict.open", ["timelineId": "unknown"]) }
    }

    @Test func predictResultIsPostedCachedAndPostedAgainAfterARestart() async throws {
        let backend = try await ReferenceBackend()
        let directory = try TemporaryDirectory()
        do {
            let room = try await liveRoom(backend, directory: directory)
            try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p5"))
            try await room.player.waitForEvent("predict.button")
            let overlayId = try #require(try await room.player.call("predict.open", ["timelineId": "p5"])["overlayId"])
            try await backend.emit(room: "m1", event: "predict-result", ["timelineId": "p5", "answer1": 12, "answer2": 30])
            let post = try await room.player.waitForEvent("overlay.post")
            #expect(post.data["overlayId"] == overlayId)
            #expect(post.data["message"] == ["key": "UPDATE_COUTER", "data": ["answer1": 12, "answer2": 30]])
            #expect(try await room.daemon.stop() == 0)
        }
        let again = try await liveRoom(backend, directory: directory)
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p5"))
        try await again.player.waitForEvent("predict.button")
        let reopened = try #require(try await again.player.call("predict.open", ["timelineId": "p5"])["overlayId"])
        let cached = try await again.player.waitForEvent("overlay.post")
        #expect(cached.data["overlayId"] == reopened)
        #expect(cached.data["message"]?["data"] == ["answer1": 12, "answer2": 30])
    }

    @Test func luckyPlayGoesThroughTheAnswerFlowAndPostsTheNumber() async throws {
        let backend = try await ReferenceBackend()
        try await backend.fault(["luckyNumber": 42])
        let room = try await liveRoom(backend)
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "l1", type: 5), trackingId: "tl1")
        #expect(try await room.player.waitForEvent("predict.button").data["kind"] == "lucky")
        let overlayId = try #require(try await room.player.call("predict.open", ["timelineId": "l1"])["overlayId"])
        #expect(try await room.player.waitForEvent("overlay.show").data["kind"] == "lucky")
        _ = try await room.player.call("overlay.bridge", ["overlayId": overlayId,
                                                    "message": ["type": "INTERACTIVE_ACTION_REPORT", "data": ["action": "PLAY"]]])
        let result = try await room.player.waitForEvent("answer.result")
        #expect(result.data["status"] == "success")
        let post = try await room.player.waitForEvent("overlay.post")
        #expect(post.data["message"] == ["key": "UPDATE_NUMBER_LUCKY", "data": ["number": 42]])
        #expect(try await backend.records("actions").last?["body"]?["timelineId"] == "l1")
        let stages = try await backend.waitForRecords("acks", "trackingId=tl1") { $0.count >= 3 }.map { $0["stage"] }
        #expect(stages.contains("answer") && stages.contains("answer-succeeded"))
    }

    @Test func leavingHidesButtons() async throws {
        let backend = try await ReferenceBackend()
        let room = try await liveRoom(backend)
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p6"), trackingId: "tp6")
        try await room.player.waitForEvent("predict.button")
        _ = try await room.player.call("room.leave")
        #expect(try await room.player.waitForEvent("predict.button") { $0["visible"] == false }.data["timelineId"] == "p6")
        let acks = try await backend.waitForRecords("acks", "trackingId=tp6") { $0.count == 2 }
        #expect(acks[1]["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "remove_all_view")
    }

    @Test func leaderboardURLPerEnvironmentAndTenant() async throws {
        let daemon = try await DaemonProcess(config: ["environment": "prod", "tenant": "onlivev2"])
        let client = try await daemon.client()
        do {
            _ = try await client.call("leaderboard.url", ["mediaId": "m1"])
            Issue.record("leaderboard.url without leaderboardUrl succeeded")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.NotConfigured")
            #expect(error.data?["missing"] == ["leaderboardUrl"])
        }
        _ = try await client.call("config.set", ["leaderboardUrl": "https://board.example.test/lb?theme=dark"])
        #expect(try await client.call("leaderboard.url", ["mediaId": "m 1"])["url"]
            == "https://board.example.test/lb?theme=dark&mediaId=m%201&tenant=onlivev2")
        _ = try await client.call("config.set", ["environment": "stg", "tenant": "vtvlive", "leaderboardUrl": "https://stg-board.example.test/"])
        #expect(try await client.call("leaderboard.url", ["mediaId": "m1"])["url"]
            == "https://stg-board.example.test/?mediaId=m1&tenant=vtvlive")
        let cli = try await daemon.ctl(["leaderboard", "m1"])
        #expect(cli.status == 0)
        #expect(cli.stdout == "https://stg-board.example.test/?mediaId=m1&tenant=vtvlive\n")
        // An observer may ask for it too.
        let asNobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        let observer = try await daemon.ctl(["leaderboard", "m1"], prefix: asNobody)
        #expect(observer.status == 0)
        #expect(observer.stdout == cli.stdout)
    }
}
