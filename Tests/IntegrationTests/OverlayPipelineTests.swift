import Foundation
import IPCProtocol
import JSONValue
import Testing

/// The live overlay pipeline against the reference backend: payload shapes, `overlay.show`,
/// show rules, replacement, recall, results, traceLock, ckst, expiry, and fan-out to players.
@Suite struct OverlayPipelineTests {
    @Test func wrappedAndFlatOverlaysAreShownWithTheirFields() async throws {
        let live = try await LiveFixture()
        let first = live.backend.quiz("tl-wrap", alignment: 2, duration: 30)
        let wrapped = try await live.show(first, trackingId: "trk-wrap", shape: "wrapped", event: "overlay")
        #expect(wrapped.data["timelineId"] == "tl-wrap")
        #expect(wrapped.data["kind"] == "minigame")
        #expect(wrapped.data["placement"] == ["location": 2, "widthPct": 40, "heightPct": 30])
        #expect(wrapped.data["durationSec"] == 30)
        #expect(wrapped.data["raw"]?["timelineId"] == "tl-wrap")
        #expect(wrapped.data["raw"]?["position"] == first["position"])
        #expect(wrapped.data["raw"]?["url"] == first["url"])
        let firstId = try #require(wrapped.data["overlayId"]?.stringValue)
        #expect(!firstId.isEmpty)
        let url = try #require(wrapped.data["url"]?.stringValue)
        #expect(url.hasPrefix("\(live.backend.baseURL)/templates/quiz.html?id=tl-wrap&"))
        // onlivev2, anonymous, not in the fanclub.
        #expect(urlQueryItems(url) == ["id": "tl-wrap", "logged": "false", "duration": "30", "fanclub": "false"])

        // The flat shape, as ex-overlay: a fresh id, and it replaces the minigame on screen.
        let second = live.backend.quiz("tl-flat", alignment: 8, duration: 12)
        try await live.backend.emitOverlay(room: live.mediaId, second, trackingId: "trk-flat", shape: "flat", event: "ex-overlay")
        let hidden = try await live.player.waitForEvent("overlay.hide")
        #expect(hidden.data["overlayId"] == .string(firstId))
        #expect(hidden.data["reason"] == "replaced_by_new_overlay")
        let flat = try await live.player.waitForEvent("overlay.show")
        #expect(flat.data["timelineId"] == "tl-flat")
        #expect(flat.data["placement"] == ["location": 8, "widthPct": 40, "heightPct": 30])
        #expect(flat.data["durationSec"] == 12)
        #expect(flat.data["raw"]?["position"] == second["position"])
        #expect(flat.overlayId != firstId && !flat.overlayId.isEmpty)
        #expect(urlQueryItems(flat.data["url"]?.stringValue ?? "") == ["id": "tl-flat", "logged": "false", "duration": "12",
                                                                       "fanclub": "false"])
        // Both shapes carry their tracking id and emit timestamp.
        for trackingId in ["trk-wrap", "trk-flat"] {
            let received = try await live.waitForAck(trackingId, "received")
            #expect(received["payload"]?["clientContext"]?["receiveLatencyMs"]?.doubleValue != nil, "\(trackingId)")
        }
        let onScreen = try await live.status()["overlays"]?.arrayValue ?? []
        #expect(onScreen.compactMap { $0["overlayId"]?.stringValue } == [flat.overlayId])

        // A viewer in the media's fanclub: no fanclub parameter.
        #expect(try await live.player.call("room.join", ["mediaId": "m1", "fanclub": true])["state"] == "joined")
        let member = try await live.show(live.backend.quiz("tl-member"))
        #expect(urlQueryItems(member.data["url"]?.stringValue ?? "") == ["id": "tl-member", "logged": "false", "duration": "30"])
    }

    @Test func otherTenantsGetNoFanclubParameter() async throws {
        let live = try await LiveFixture(tenant: "vtvlive", viewer: .alice)
        let shown = try await live.show(live.backend.quiz("tl-vtv", duration: 20), trackingId: "trk-vtv")
        #expect(urlQueryItems(shown.data["url"]?.stringValue ?? "") == ["id": "tl-vtv", "logged": "true", "duration": "20"])
    }

    @Test func overlaysOutsideTheRulesAreNotShown() async throws {
        let live = try await LiveFixture()
        let backend = live.backend
        // Not for this platform; an alignment out of range; no alignment at all.
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-iphone", targets: ["iphone"]), trackingId: "trk-iphone")
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-align9", alignment: 9), trackingId: "trk-align9")
        var noAlignment = try #require(backend.quiz("tl-noalign").objectValue)
        noAlignment["position"] = ["width": 40, "height": 30]
        try await backend.emitOverlay(room: "m1", .object(noAlignment), trackingId: "trk-noalign")
        // Targeted at this os by name: shown.
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-os", targets: ["iphone", "linuxstb"]), trackingId: "trk-os")
        #expect(try await live.shownTimelines(until: "tl-os") == ["tl-os"])

        // The same timeline again while it is on screen: not shown (the next one is).
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-os"), trackingId: "trk-os-again")
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-next"), trackingId: "trk-next")
        #expect(try await live.shownTimelines(until: "tl-next") == ["tl-next"])
    }

    @Test func anAnsweredTimelineIsNotShownAgain() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let shown = try await live.show(live.backend.quiz("tl-ans"), trackingId: "trk-ans-1")
        #expect(try await live.answer(shown.overlayId)["status"] == "success")
        // Dismissed, then sent again: still answered, so not shown; the next timeline is.
        _ = try await live.player.call("overlay.dismiss", ["overlayId": .string(shown.overlayId)])
        try await live.backend.emitOverlay(room: "m1", live.backend.quiz("tl-ans"), trackingId: "trk-ans-2")
        try await live.backend.emitOverlay(room: "m1", live.backend.quiz("tl-after"), trackingId: "trk-after")
        #expect(try await live.shownTimelines(until: "tl-after") == ["tl-after"])
    }

    @Test func aTimelineTheBackendSaysWasAnsweredIsNotShownEvenRightAtTheJoin() async throws {
        // The room's timeline emits the overlay as soon as the daemon joins.
        let folder = try TemporaryDirectory()
        let scenario = folder.path + "/scenario.json"
        let overlay: JSONValue = ["timelineId": "tl-done", "typeTimeline": 1, "url": "{base}/templates/quiz.html?id=tl-done",
                                  "position": ["alignment": 4, "width": 40, "height": 30], "duration": 30, "targets": ["all"]]
        let rooms: JSONValue = ["rooms": ["m1": [["at": 0, "event": "overlay", "trackingId": "trk-done", "overlay": overlay]]]]
        try Data(rooms.serialized()).write(to: URL(fileURLWithPath: scenario))
        let backend = try await ReferenceBackend(arguments: ["--scenario", scenario])
        try await backend.admin("POST", "/_admin/answered", ["userId": "alice", "mediaId": "m1", "timelineIds": ["tl-done"]])

        let live = try await LiveFixture(viewer: .alice, backend: backend)
        let rendered = try await live.waitForAck("trk-done", "rendered", timeoutMs: 12_000)
        #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "already_interacted")
        #expect(try await live.status()["overlays"]?.arrayValue?.isEmpty == true)
    }

    @Test func aDismissedTimelineMayBeShownAgain() async throws {
        let live = try await LiveFixture()
        let shown = try await live.show(live.backend.quiz("tl-again"), trackingId: "trk-again-1")
        _ = try await live.player.call("overlay.dismiss", ["overlayId": .string(shown.overlayId)])
        let again = try await live.show(live.backend.quiz("tl-again"), trackingId: "trk-again-2")
        #expect(again.overlayId != shown.overlayId)
    }

    @Test func recallResultsTraceLockAndPlayerState() async throws {
        let live = try await LiveFixture()
        let overlay = live.backend.quiz("tl-trace", extra: ["traceLock": true])
        let shown = try await live.show(overlay, trackingId: "trk-trace")
        let socketId = try await live.socketId()

        let traced = try await #require(try live.backend.waitForRecords("receive-messages", "trackingId=trk-trace") { !$0.isEmpty }.first)
        #expect(traced["timelineId"] == "tl-trace")
        #expect(traced["mediaId"] == "m1")
        #expect(traced["socketId"] == .string(socketId))
        #expect((traced["receivedAt"]?.doubleValue ?? 0) > 1_700_000_000_000)
        #expect(traced["problems"]?.arrayValue?.isEmpty != false)

        try await live.backend.emit(room: "m1", event: "update-result", ["timelineId": "tl-trace", "data": ["correct": "B", "stats": ["A": 3, "B": 9]]])
        let post = try await live.player.waitForEvent("overlay.post")
        #expect(post.data == ["overlayId": .string(shown.overlayId),
                              "message": ["key": "UPDATE_DATA_INTERACTIVE", "data": ["correct": "B", "stats": ["A": 3, "B": 9]]]])

        _ = try await live.player.call("player.state", ["state": "paused", "position": 42.5])
        let ckst = try await #require(try live.backend.waitForRecords("room-events", "type=ckst") { !$0.isEmpty }.first)
        #expect(ckst["payload"] == ["mediaId": "m1", "state": "paused", "position": 42.5])
        #expect(ckst["sid"] == .string(socketId))
        #expect(ckst["problems"] == [])

        try await live.backend.emit(room: "m1", event: "recall-overlay", ["timelineId": "tl-trace"])
        let hidden = try await live.player.waitForEvent("overlay.hide")
        #expect(hidden.data["overlayId"] == .string(shown.overlayId))
        #expect(hidden.data["reason"] == "recalled")
        #expect(try await live.status()["overlays"]?.arrayValue?.isEmpty == true)
        // Every event the daemon sent has a name the backend knows.
        #expect(try await live.backend.records("unknown-events").isEmpty)
    }

    @Test func anOverlayExpiresFiveSecondsAfterItsDuration() async throws {
        let live = try await LiveFixture()
        let shown = try await live.show(live.backend.quiz("tl-short", duration: 1), trackingId: "trk-short")
        let hidden = try await live.player.waitForEvent("overlay.hide", timeoutMs: 12_000)
        #expect(hidden.data["overlayId"] == .string(shown.overlayId))
        #expect(hidden.data["reason"] == "expired")
        let lifetime = try #require(hidden.date).timeIntervalSince(try #require(shown.date))
        #expect(lifetime >= 5.9 && lifetime < 8, "expired after \(lifetime) s, expected about 6 s")
    }

    @Test func anUntrackedOverlayIsShownWithoutAcks() async throws {
        let live = try await LiveFixture()
        let shown = try await live.show(live.backend.quiz("tl-untracked"), trackingId: nil)
        let listed = try #require(try await live.status()["overlays"]?.arrayValue?.first)
        #expect(listed["overlayId"] == .string(shown.overlayId))
        #expect(listed["tracked"] == false)
        _ = try await live.player.call("overlay.attached", ["overlayId": .string(shown.overlayId)])
        _ = try await live.player.call("overlay.rendered", ["overlayId": .string(shown.overlayId), "status": "loaded"])
        // A tracked overlay after it: its acks arrive, and they are the only ones.
        try await live.show(live.backend.quiz("tl-tracked"), trackingId: "trk-tracked")
        try await live.waitForAck("trk-tracked", "received")
        try await live.waitForAcksDelivered()
        let all = try await live.backend.records("acks")
        #expect(all.allSatisfy { $0["trackingId"] == "trk-tracked" }, "\(all)")
    }

    @Test func threePlayersSeeTheSameEventsInTheSameOrder() async throws {
        let live = try await LiveFixture(events: nil)
        let players = try await live.daemon.clients(3)
        for player in players { try await player.subscribe(["overlay."]) }
        let backend = live.backend
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-p1"), trackingId: "trk-p1")
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-p2", alignment: 0), trackingId: "trk-p2", shape: "flat")
        try await backend.emit(room: "m1", event: "update-result", ["timelineId": "tl-p2", "data": ["correct": "A"]])
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-p3", alignment: 8), event: "ex-overlay")
        try await backend.emit(room: "m1", event: "recall-overlay", ["timelineId": "tl-p3"])

        var streams: [[EventEnvelope]] = []
        for player in players {
            var events: [EventEnvelope] = []
            while !(events.last?.type == "overlay.hide" && events.last?.data["reason"] == "recalled") {
                guard let event = try await player.nextEvent(timeoutMs: 10_000) else {
                    throw TestFailure("player saw only \(events.map(\.type))")
                }
                events.append(event)
            }
            streams.append(events)
        }
        let expected = ["overlay.show", "overlay.hide", "overlay.show", "overlay.post", "overlay.hide", "overlay.show", "overlay.hide"]
        #expect(streams[0].map(\.type) == expected)
        let seqs = streams.map { $0.compactMap(\.seq) }
        #expect(seqs[0].count == expected.count)
        #expect(seqs[0] == seqs[0].sorted() && Set(seqs[0]).count == seqs[0].count)
        #expect(seqs[1] == seqs[0])
        #expect(seqs[2] == seqs[0])
        #expect(streams[1].map(\.data) == streams[0].map(\.data))
        #expect(streams[2].map(\.data) == streams[0].map(\.data))
    }
}
