import JSONValue
import Testing
@testable import InteractiveDaemon

/// Which overlays are shown (`OverlayAdmission`). The answer flow itself: AnswerCoreTests.
@Suite struct AnswerDecisionTests {
    private let room = RoomKey(mediaId: "m1", mode: .live)

    private func overlay(_ timelineId: String = "tl1", typeTimeline: Int = 1, targets: [String] = ["all"]) throws -> IncomingOverlay {
        try #require(IncomingOverlay(payload: [
            "timelineId": .string(timelineId), "typeTimeline": .number(Double(typeTimeline)), "url": "https://cdn/q.html",
            "position": ["alignment": 4, "width": 40, "height": 30], "targets": .array(targets.map(JSONValue.string)),
        ]))
    }

    private func refusal(_ overlay: IncomingOverlay, current: RoomKey?, answered: Set<String> = [],
                         onScreen: [String]? = []) -> String? {
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
}
