import Foundation
import IPCProtocol
import JSONValue
import Testing

/// The web bridge (`overlay.bridge`) and the answer flow against the reference backend.
@Suite struct BridgeAndAnswerTests {
    // MARK: Bridge

    @Test func showAndHideAnalyticsRevealAndHideWithThePlayerControls() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-reveal")).overlayId
        // As an object.
        let shown = try await live.bridge(overlayId, ["type": "INTERACTIVE_SHOW_ANALYTICS", "data": ["id": "tl-reveal"]])
        #expect(shown["handled"] == true)
        let reveal = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(reveal.type == "overlay.reveal")
        #expect(reveal.data["overlayId"] == .string(overlayId))
        let hideControls = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(hideControls.type == "player.controls")
        #expect(hideControls.data["visible"] == false)
        #expect(try await live.status()["overlays"]?.arrayValue?.first?["revealed"] == true)

        // As the JSON string the template posted: hidden, then the controls come back.
        try await live.bridge(overlayId, .string(#"{"type":"INTERACTIVE_HIDE_ANALYTICS","data":{}}"#))
        let hidden = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(hidden.type == "overlay.hide")
        #expect(hidden.data["overlayId"] == .string(overlayId))
        #expect(hidden.data["reason"] == "interactive_hide")
        let showControls = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(showControls.type == "player.controls")
        #expect(showControls.data["visible"] == true)
    }

    @Test func adClickPingDismissAndUnknownOverlays() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-ad")).overlayId
        let click = try await live.bridge(overlayId, .string(
            #"{"type":"INTERACTIVE_ACTION_REPORT","data":{"action":"CLICK_ADS","url":"https://ads.example/offer?x=1"}}"#))
        #expect(click["action"] == "link")
        let link = try await live.player.waitForEvent("overlay.link")
        #expect(link.data == ["overlayId": .string(overlayId), "url": "https://ads.example/offer?x=1", "loadable": true])

        // A ping (object and string) is taken and does nothing: the next event is the dismissal's.
        #expect(try await live.bridge(overlayId, ["type": "INTERACTIVE_PING_ANALYTICS", "data": ["t": 1]])["handled"] == true)
        try await live.bridge(overlayId, .string(#"{"type":"INTERACTIVE_PING_ANALYTICS"}"#))
        _ = try await live.player.call("overlay.dismiss", ["overlayId": .string(overlayId)])
        let next = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(next.type == "overlay.hide")
        #expect(next.data["reason"] == "dismissed")
        #expect(next.data["overlayId"] == .string(overlayId))
        // Not revealed: the controls were never taken, so none come back.
        try await live.player.expectNoEvent("player.controls", withinMs: 300)
        #expect(try await live.backend.records("actions").isEmpty)

        for (method, params) in [
            ("overlay.bridge", ["overlayId": .string(overlayId), "message": ["type": "INTERACTIVE_SHOW_ANALYTICS"]] as JSONValue),
            ("overlay.dismiss", ["overlayId": .string(overlayId)]),
            ("overlay.attached", ["overlayId": "ov-none"]),
        ] {
            do {
                _ = try await live.player.call(method, params)
                Issue.record("\(method) on an overlay not on screen succeeded")
            } catch IPCClientError.rpc(let error) {
                #expect(error.name == "interactive.UnknownOverlay", "\(method): \(error)")
            }
        }
    }

    /// Issue 21, item 2: an ad click is never an answer, whatever its url. A click to a link a
    /// web view cannot open reached /api/actions, marked the timeline answered or asked for a bet.
    @Test func anAdClickToAnAppLinkIsALinkNeverAnAnswer() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let overlayId = try await live.show(live.backend.quiz("tl-app-ad", extra: ["requireBet": true, "betAmount": 50])).overlayId
        for url in ["intent://scan/#Intent;scheme=zxing;end", "market://details?id=tv.example"] {
            let click = try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["action": "CLICK_ADS", "url": .string(url)]])
            #expect(click == ["handled": true, "action": "link"])
            let link = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
            #expect(link.type == "overlay.link")
            #expect(link.data == ["overlayId": .string(overlayId), "url": .string(url), "loadable": false])
        }
        let dropped = try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["action": "CLICK_ADS", "url": "file:///etc/passwd"]])
        #expect(dropped == ["handled": true, "action": "ignored"])
        let noURL = try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["action": "CLICK_ADS"]])
        #expect(noURL == ["handled": true, "action": "ignored"])
        try await live.player.expectNoEvent("answer.confirm", withinMs: 300)
        #expect(try await live.backend.records("actions").isEmpty)
        #expect(try await live.backend.records("rest-log", "path=/api/public/vip-status").isEmpty)
        // Not answered: the viewer's real answer goes through.
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
        _ = try await live.player.waitForEvent("answer.confirm")
        _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        #expect(try await live.player.waitForEvent("answer.result").data["status"] == "success")
    }

    // MARK: Answers refused locally

    @Test func anAnonymousViewerIsAskedToLogIn() async throws {
        let live = try await LiveFixture()
        let overlayId = try await live.show(live.backend.quiz("tl-anon")).overlayId
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "B"]]])
        let login = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(login.type == "login.required")
        #expect(login.data == ["overlayId": .string(overlayId), "reason": "answer"])
        let result = try await live.player.waitForEvent("answer.result")
        #expect(result.data == ["overlayId": .string(overlayId), "timelineId": "tl-anon", "status": "failure",
                                "reason": "login_required"])
        #expect(try await live.backend.records("rest-log", "path=/api/actions").isEmpty)
    }

    struct LocalRefusal: Sendable, CustomTestStringConvertible {
        let viewer: BackendViewer
        let requirement: String
        let reason: String
        var testDescription: String { "\(viewer) \(requirement) → \(reason)" }
    }

    @Test(arguments: [
        LocalRefusal(viewer: .alice, requirement: "requireFanclub", reason: "fanclub_required"),
        LocalRefusal(viewer: .bob, requirement: "requireVip", reason: "vip_required"),
        LocalRefusal(viewer: .dave, requirement: "requireVip", reason: "vip_required"),
        LocalRefusal(viewer: .carol, requirement: "requireBet", reason: "bet_not_allowed"),
        LocalRefusal(viewer: .bob, requirement: "requireBet", reason: "bet_not_allowed"),
    ])
    func requirementsTheViewerLacksRefuseTheAnswer(_ refusal: LocalRefusal) async throws {
        let live = try await LiveFixture(viewer: refusal.viewer, fanclub: false)
        let overlay = live.backend.quiz("tl-req", extra: [refusal.requirement: true, "betAmount": 10])
        let overlayId = try await live.show(overlay, trackingId: "trk-req").overlayId
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
        if refusal.requirement == "requireFanclub" {
            let fanclub = try await live.player.waitForEvent("fanclub.required")
            #expect(fanclub.data == ["overlayId": .string(overlayId), "mediaId": "m1"])
        }
        let result = try await live.player.waitForEvent("answer.result").data
        #expect(result["status"] == "failure")
        #expect(result["reason"] == .string(refusal.reason))
        #expect(result["timelineId"] == "tl-req")
        #expect(try await live.backend.records("actions").isEmpty)
        // Refused locally: no answer stage.
        #expect(try await live.acks("trk-req", stage: "answer").isEmpty)
    }

    @Test func joiningTheFanclubInPlaceLetsTheViewerAnswer() async throws {
        let live = try await LiveFixture(viewer: .bob, fanclub: false)
        let overlayId = try await live.show(live.backend.quiz("tl-fan", extra: ["requireFanclub": true])).overlayId
        #expect(try await live.answer(overlayId)["reason"] == "fanclub_required")
        // The same media with fanclub true: taken in place (no new join); the overlay is shown again
        // for the new membership (issue 21, item 5: a new overlay id), and the answer goes through.
        #expect(try await live.player.call("room.join", ["mediaId": "m1", "fanclub": true])["state"] == "joined")
        let hidden = try await live.player.waitForEvent("overlay.hide").data
        #expect(hidden["overlayId"] == .string(overlayId) && hidden["reason"] == "session_changed")
        let again = try await live.player.waitForEvent("overlay.show").data
        #expect(try await live.answer(try #require(again["overlayId"]?.stringValue))["status"] == "success")
        #expect(try await live.backend.records("actions").count == 1)
        #expect(try await live.backend.records("room-events", "type=join-room").count == 1)
        #expect(try await live.backend.records("unknown-events").isEmpty)
    }

    // MARK: Bets and the REST call

    @Test func aConfirmedBetIsPostedOnceAndConfirmed() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let overlay = live.backend.quiz("tl-bet", extra: ["requireBet": true, "betAmount": 25])
        let overlayId = try await live.show(overlay, trackingId: "trk-bet").overlayId
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "B"]]])
        let confirm = try await live.player.waitForEvent("answer.confirm")
        #expect(confirm.data["overlayId"] == .string(overlayId))
        #expect(confirm.data["timelineId"] == "tl-bet")
        #expect(confirm.data["kind"] == "bet")
        #expect(confirm.data["amount"] == 25)
        // Nothing is posted before the viewer accepts.
        #expect(try await live.backend.records("actions").isEmpty)
        _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        let result = try await live.player.waitForEvent("answer.result").data
        #expect(result["status"] == "success")
        #expect(result["timelineId"] == "tl-bet")
        let confirmed = try await live.player.waitForEvent("overlay.post")
        #expect(confirmed.data == ["overlayId": .string(overlayId),
                                   "message": ["key": "UPDATE_CONFIRM", "data": ["timelineId": "tl-bet", "success": true]]])

        let actions = try await live.backend.records("actions")
        try #require(actions.count == 1)
        let socketId = try await live.socketId()
        #expect(actions[0]["body"] == ["mediaId": "m1", "timelineId": "tl-bet", "os": "linuxstb", "socketId": .string(socketId),
                                       "userId": "alice", "mode": "live", "answer": ["answer": ["choice": "B"]]])
        #expect(actions[0]["problems"] == [])
        #expect(actions[0]["authorization"] == "Bearer token-alice")
        #expect(actions[0]["tenant"] == "onlivev2")

        // Answered once: a second answer is refused without a request.
        let again = try await live.answer(overlayId)
        #expect(again["status"] == "failure")
        #expect(again["reason"] == "already_answered")
        #expect(try await live.backend.records("actions").count == 1)
        #expect(try await live.backend.records("rest-log", "path=/api/actions").count == 1)
    }

    @Test func aVipAnswerIsConfirmedAndAPlainOneIsNot() async throws {
        let live = try await LiveFixture(viewer: .carol)
        let vipId = try await live.show(live.backend.quiz("tl-vip", extra: ["requireVip": true])).overlayId
        #expect(try await live.answer(vipId)["status"] == "success")
        let confirmed = try #require(try await live.player.nextEvent(timeoutMs: 10_000))
        #expect(confirmed.type == "overlay.post")
        #expect(confirmed.data["message"] == ["key": "UPDATE_CONFIRM", "data": ["timelineId": "tl-vip", "success": true]])

        let plainId = try await live.show(live.backend.quiz("tl-plain")).overlayId
        #expect(try await live.answer(plainId)["status"] == "success")
        try await live.player.expectNoEvent("overlay.post", withinMs: 300)
        // Only the VIP overlay asked for the viewer's status.
        #expect(try await live.backend.records("rest-log", "path=/api/public/vip-status").count == 1)
        #expect(try await live.backend.records("actions").count == 2)
    }

    @Test func aDeclinedBetIsNotPostedAndMayBeRetried() async throws {
        let live = try await LiveFixture(viewer: .dave)
        let overlayId = try await live.show(live.backend.quiz("tl-decline", extra: ["requireBet": true, "betAmount": 5])).overlayId
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "C"]]])
        #expect(try await live.player.waitForEvent("answer.confirm").data["amount"] == 5)
        _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": false])
        let declined = try await live.player.waitForEvent("answer.result").data
        #expect(declined["status"] == "failure")
        #expect(declined["reason"] == "bet_declined")
        #expect(try await live.backend.records("actions").isEmpty)
        // Without a pending confirmation, answer.confirm is a bad request.
        await #expect(throws: IPCClientError.self) {
            try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        }

        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "C"]]])
        try await live.player.waitForEvent("answer.confirm")
        _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        #expect(try await live.player.waitForEvent("answer.result").data["status"] == "success")
        #expect(try await live.backend.records("actions").count == 1)
    }

    struct APIFailure: Sendable, CustomTestStringConvertible {
        let reply: JSONValue
        let reason: String
        var testDescription: String { "actionsReply \(reply.jsonText) → \(reason)" }
    }

    @Test(arguments: [
        APIFailure(reply: "EX400", reason: "api_EX400"),
        APIFailure(reply: "PM402", reason: "api_PM402"),
        APIFailure(reply: false, reason: "api_false"),
        APIFailure(reply: "malformed", reason: "unknown_response"),
        APIFailure(reply: "http502", reason: "unknown_response"),
        APIFailure(reply: "unauthorized", reason: "api_unauthorized"),
        APIFailure(reply: "forbidden", reason: "api_unauthorized"),
    ])
    func backendRefusalsAreReported(_ failure: APIFailure) async throws {
        let live = try await LiveFixture(viewer: .alice)
        try await live.backend.fault(["actionsReply": failure.reply])
        let overlayId = try await live.show(live.backend.quiz("tl-fail")).overlayId
        let result = try await live.answer(overlayId)
        #expect(result["status"] == "failure")
        #expect(result["reason"] == .string(failure.reason))
        #expect(try await live.backend.records("actions").count == 1)
    }

    @Test func aTimeoutIsANetworkError() async throws {
        let live = try await LiveFixture(viewer: .alice, config: ["httpTimeoutMs": 300])
        try await live.backend.fault(["restDelayMs": 2000])
        let overlayId = try await live.show(live.backend.quiz("tl-slow")).overlayId
        let started = Date()
        let result = try await live.answer(overlayId)
        #expect(result["status"] == "failure")
        #expect(result["reason"] == "network_error")
        #expect(Date().timeIntervalSince(started) < 1.9, "the answer waited for the reply instead of timing out")
    }

    /// An answer whose connection dies before any reply is a network error and reaches the
    /// backend once: only the viewer's own retry sends it again (issue 20, item 1).
    @Test func anAnswerWhoseConnectionDiesIsPostedOnce() async throws {
        let live = try await LiveFixture(viewer: .alice)  // the join's status call parks a connection
        let overlayId = try await live.show(live.backend.quiz("tl-dies")).overlayId
        try await live.backend.fault(["closeWithoutReply": true])
        let result = try await live.answer(overlayId)
        #expect(result["status"] == "failure")
        #expect(result["reason"] == "network_error")
        #expect(try await live.backend.records("actions").count == 1)

        try await live.backend.fault(["closeWithoutReply": nil])
        #expect(try await live.answer(overlayId)["status"] == "success")
        #expect(try await live.backend.records("actions").count == 2)
    }

    @Test func afterAFailureTheViewerMayTryAgain() async throws {
        let live = try await LiveFixture(viewer: .alice)
        try await live.backend.fault(["actionsReply": "EX400"])
        let overlayId = try await live.show(live.backend.quiz("tl-retry")).overlayId
        #expect(try await live.answer(overlayId)["reason"] == "api_EX400")
        try await live.backend.fault(["actionsReply": nil])
        let second = try await live.answer(overlayId, ["answer": ["choice": "D"]])
        #expect(second["status"] == "success")
        #expect(second["data"] == ["number": 7])
        let actions = try await live.backend.records("actions")
        #expect(actions.map { $0["reply"] } == ["EX400", "success"])
        #expect(actions.last?["body"]?["answer"] == ["answer": ["choice": "D"]])
        #expect(try await live.answer(overlayId)["reason"] == "already_answered")
        #expect(try await live.backend.records("actions").count == 2)
    }
}
