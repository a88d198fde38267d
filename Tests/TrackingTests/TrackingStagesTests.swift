import Testing
@testable import InteractiveDaemon

@Suite struct TrackingStagesTests {
    @Test func eachStageIsItsOwnBitAndTheStoredStateReadsBack() throws {
        var sent: TrackingStages = []
        for stage in TrackingStage.allCases { #expect(!sent.contains(stage)) }
        sent.insert(.rendered)
        sent.insert(.answerFailed)
        #expect(TrackingStage.allCases.filter { sent.contains($0) } == [.rendered, .answerFailed])
        #expect(TrackingStages(TrackingStage.allCases) == TrackingStages(TrackingStage.allCases.reversed()))

        var session = TrackingSession(trackingId: "t1", timelineId: "tl1", overlayType: "minigame", emitTimestamp: nil,
                                      receivedAt: 1_000)
        session.sent = sent
        #expect(session.stored["sent"] == ["rendered", "answer-failed"])
        let read = try #require(TrackingSession(trackingId: "t1", stored: session.stored))
        #expect(read.sent == sent)
        #expect(read.renderedSent && !read.awaitsAnswerResult)
    }
}
