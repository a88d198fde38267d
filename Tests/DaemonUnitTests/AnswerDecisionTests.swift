import JSONValue
import Testing
@testable import InteractiveDaemon

/// Which overlays are shown (`OverlayAdmission`) and how bet confirmations end
/// (`BetConfirmations`), with fixed times.
@Suite struct AnswerDecisionTests {
    private let room = RoomKey(mediaId: "m1", mode: .live)

    private func overlay(_ timelineId: String = "tl1", typeTimeline: Int = 1, targets: [String] = ["all"]) throws -> IncomingOverlay {
        try #require(IncomingOverlay(payload: [
            "timelineId": .string(timelineId), "typeTimeline": .number(Double(typeTimeline)), "url": "https://cdn/q.html",
            "position": ["alignment": 4, "width": 40, "height": 30], "targets": .array(targets.map(JSONValue.string)),
        ]))
    }

    private func refusal(_ overlay: IncomingOverlay, current: RoomKey?, answered: Set<String> = [],
                         onScreen: Set<String>? = []) -> String? {
        OverlayAdmission.refusal(overlay, arrivedIn: room, current: current, os: "linuxstb", answered: answered, onScreen: onScreen)
    }

    @Test func anOverlayOfARoomLeftMeanwhileIsNotShownInTheNextOne() throws {
        let quiz = try overlay()
        #expect(refusal(quiz, current: room) == nil)
        #expect(refusal(quiz, current: RoomKey(mediaId: "m2", mode: .live)) == "remove_all_view")
        #expect(refusal(quiz, current: RoomKey(mediaId: "m1", mode: .vod)) == "remove_all_view")
        #expect(refusal(quiz, current: nil) == "remove_all_view")
    }

    @Test(arguments: [3, 5])
    func predictAndLuckyAreFilteredLikeMinigames(_ typeTimeline: Int) throws {
        let elsewhere = try overlay(typeTimeline: typeTimeline, targets: ["ios"])
        #expect(refusal(elsewhere, current: room, onScreen: nil) == "not_targeted")
        let answered = try overlay(typeTimeline: typeTimeline)
        #expect(refusal(answered, current: room, answered: ["tl1"], onScreen: nil) == "already_interacted")
        // Without the on-screen check, an open dialog of the timeline does not refuse it.
        #expect(refusal(answered, current: room, onScreen: nil) == nil)
        #expect(refusal(answered, current: room, onScreen: ["tl1"]) == "already_on_screen")
    }

    // MARK: Bet confirmations

    @Test func aReplyBeforeTheFlowWaitsIsKept() {
        var confirmations = BetConfirmations<String>()
        #expect(confirmations.ask("ov1", deadline: 1_000) == nil)
        guard case .kept = confirmations.reply("ov1", accept: true) else {
            Issue.record("an early reply was refused")
            return
        }
        #expect(confirmations.wait("ov1", "waiter") == .accepted)
        guard case .notPending = confirmations.reply("ov1", accept: true) else {
            Issue.record("a second reply was taken")
            return
        }
    }

    @Test func aReplyResumesTheWaitingFlow() {
        var confirmations = BetConfirmations<String>()
        _ = confirmations.ask("ov1", deadline: 1_000)
        #expect(confirmations.wait("ov1", "waiter") == nil)
        #expect(confirmations.awaitsReply("ov1"))
        guard case .resume(let waiter) = confirmations.reply("ov1", accept: false) else {
            Issue.record("the waiting flow was not resumed")
            return
        }
        #expect(waiter == "waiter")
        #expect(!confirmations.awaitsReply("ov1"))
    }

    @Test func nobodyWaitsForeverTheDeadlineDeclines() {
        var confirmations = BetConfirmations<String>()
        _ = confirmations.ask("ov1", deadline: 1_000)
        _ = confirmations.ask("ov2", deadline: 5_000)
        #expect(confirmations.wait("ov1", "first") == nil)
        #expect(confirmations.expire(now: 999).isEmpty)
        let expired = confirmations.expire(now: 1_000)
        #expect(expired.map(\.overlayId) == ["ov1"])
        #expect(expired.map(\.waiter) == ["first"])
        // A reply after the deadline is refused.
        guard case .notPending = confirmations.reply("ov1", accept: true) else {
            Issue.record("a late reply was taken")
            return
        }
        // One that expired before its flow waited is declined when the flow waits.
        #expect(confirmations.expire(now: 6_000).isEmpty)
        #expect(confirmations.wait("ov2", "second") == .timedOut)
    }

    @Test func theOverlayLeavingEndsTheConfirmation() {
        var confirmations = BetConfirmations<String>()
        _ = confirmations.ask("ov1", deadline: 1_000)
        #expect(confirmations.wait("ov1", "waiter") == nil)
        guard case .resume(let waiter) = confirmations.overlayGone("ov1") else {
            Issue.record("the flow was not resumed when the overlay left")
            return
        }
        #expect(waiter == "waiter")
        _ = confirmations.ask("ov2", deadline: 1_000)
        _ = confirmations.overlayGone("ov2")
        #expect(confirmations.wait("ov2", "late") == .overlayGone)
        #expect(confirmations.expire(now: 2_000).isEmpty)
    }
}
