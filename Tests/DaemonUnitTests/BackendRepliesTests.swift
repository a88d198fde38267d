import JSONValue
import Testing
@testable import InteractiveDaemon

/// Reading the backend's REST replies part by part (issue 20, item 2; issue 21, item 4).
@Suite struct BackendRepliesTests {
    private func document(_ text: String) throws -> JSONDocument { try JSONDocument(validating: Array(text.utf8)) }

    @Test func theAnswerShapeIsReadWithItsCode() throws {
        #expect(AnswerReply(try document(#"{"success":false,"code":"EX400","message":"no"}"#))?.code == "EX400")
        #expect(AnswerReply(try document(#"{"success":false,"code":402}"#))?.code == "402")
        #expect(AnswerReply(try document(#"{"success":false,"code":null}"#))?.code == nil)
        let long = try #require(AnswerReply(try document(#"{"success":false,"code":"\#(String(repeating: "C", count: 100))"}"#)))
        #expect(long.code?.hasPrefix(String(repeating: "C", count: 64)) == true && long.code?.contains("36 more") == true)
        #expect(AnswerReply(try document(#"{"success":true,"data":{"number":7}}"#))?.data == ["number": 7])
        #expect(AnswerReply(try document(#"{"success":"yes"}"#)) == nil)
        #expect(AnswerReply(try document(#"["success"]"#)) == nil)
        #expect(AnswerReply.refusal(try document(#"{"success":true}"#)) == nil)
    }

    @Test func anAnswersDataOverTheBoundIsLeftOut() throws {
        let big = String(repeating: "d", count: BackendReplies.maxAnswerDataBytes)
        let reply = try #require(AnswerReply(try document(#"{"success":true,"data":{"blob":"\#(big)"}}"#)))
        #expect(reply.success && reply.data == .null)
    }

    /// `interactive.status` returned the backend's whole reply (16 MiB reached a local client):
    /// now what the contract holds, bounded.
    @Test func theInteractiveStatusIsTheAnsweredTimelinesAlone() throws {
        let long = String(repeating: "x", count: IncomingOverlay.maxIdBytes + 1)
        let reply = try #require(InteractiveStatusReply(try document(
            #"{"answered":["tl1",7,"","\#(long)",{"id":1},null,"tl2"],"other":[1,2,3],"secret":"s"}"#)))
        #expect(reply.answered == ["tl1", "7", "tl2"])
        #expect(reply.json == ["answered": ["tl1", "7", "tl2"]])
        #expect(InteractiveStatusReply(try document(#"{"answered":"tl1"}"#)) == nil)
        let many = "[" + (0..<(BackendReplies.maxAnsweredIds + 50)).map(String.init).joined(separator: ",") + "]"
        #expect(InteractiveStatusReply(try document(#"{"answered":\#(many)}"#))?.answered.count == BackendReplies.maxAnsweredIds)
    }

    @Test func aScenarioKeepsItsActiveTimelinesAsBytes() throws {
        let text = #"""
            {"timelines":[
              {"timelineId":"a","showStatus":"ACTIVE","time":"00:01:05","url":"http://x/a"},
              {"timelineId":"b","showStatus":"INACTIVE","time":"3"},
              {"timelineId":"c","showStatus":"ACTIVE","time":"soon"},
              {"showStatus":"ACTIVE","time":"4"},
              {"timelineId":"d","showStatus":"ACTIVE","time":7,"pad":"\#(String(repeating: "p", count: VODScenarioReply.maxTimelineBytes))"},
              "not an object",
              {"timelineId":42,"showStatus":"ACTIVE","time":9}
            ]}
            """#
        let scenario = try #require(VODScenarioReply(try document(text)))
        #expect(scenario.timelines.map(\.timelineId) == ["a", "42"])
        #expect(scenario.timelines.map(\.seconds) == [65, 9])
        #expect(scenario.timelines.first?.overlay?.url == "http://x/a")
        #expect(scenario.skippedCount == 3)
        #expect(scenario.skips.contains { $0.contains("timeline c: malformed time") })
        #expect(scenario.skips.contains { $0.contains("timeline d:") && $0.contains("over 65536") })
        #expect(VODScenarioReply(try document(#"{"items":[]}"#)) == nil)
    }

    @Test func onlyAFewSkipsAreNamed() throws {
        let timelines = (0..<100).map { #"{"timelineId":"t\#($0)","showStatus":"ACTIVE","time":"x"}"# }.joined(separator: ",")
        let scenario = try #require(VODScenarioReply(try document(#"{"timelines":[\#(timelines)]}"#)))
        #expect(scenario.skippedCount == 100 && scenario.skips.count == VODScenarioReply.maxNamedSkips)
    }

    @Test func aLargeBodyIsReadOffTheLoopAndNotJSONIsNil() async {
        let big = Array(#"{"answered":["#.utf8) + Array((0..<3_000).map { "\"t\($0)\"" }.joined(separator: ",").utf8) + Array("]}".utf8)
        #expect(big.count > BackendReplies.inlineBytes)
        #expect(await BackendReplies.read(big, InteractiveStatusReply.init)?.answered.count == 3_000)
        #expect(await BackendReplies.read(Array("<html>".utf8), InteractiveStatusReply.init) == nil)
    }
}
