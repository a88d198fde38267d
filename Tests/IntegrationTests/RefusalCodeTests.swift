import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Refusals keep their code (issue 21, item 4): a REST reply in the answer shape
/// (`{"success":false,"code":"EX400"}`) is read whatever its HTTP status; only 401 and 403 mean
/// the session, and only a body that is not the shape is `unknown_response`.
@Suite struct RefusalCodeTests {
    @Test(arguments: [400, 402, 404, 409, 500])
    func anAnswerRefusedWithAnyStatusKeepsItsCode(_ status: Int) async throws {
        let live = try await LiveFixture(viewer: .alice)
        try await live.backend.fault(["actionsReply": "EX400", "refusalStatus": .number(Double(status))])
        let overlayId = try await live.showLoaded(live.backend.quiz("tl-\(status)"), trackingId: "trk-\(status)")
        let result = try await live.answer(overlayId)
        #expect(result["status"] == "failure")
        #expect(result["reason"] == "api_EX400", "HTTP \(status): \(result)")
        let failed = try await live.waitForAck("trk-\(status)", "answer-failed")
        #expect(failed["payload"]?["clientContext"]?["failureReason"] == "api_EX400")
        #expect(try await live.backend.records("actions").count == 1)
    }

    /// A VIP status refused in the answer shape gives its code too, whatever the status.
    @Test(arguments: [200, 402, 409])
    func aVIPStatusRefusedKeepsItsCode(_ status: Int) async throws {
        let live = try await LiveFixture(viewer: .alice)
        try await live.backend.fault(["vipReply": "EX402", "refusalStatus": .number(Double(status))])
        let overlayId = try await live.show(live.backend.quiz("tl-vip-\(status)", extra: ["requireVip": true])).overlayId
        let result = try await live.answer(overlayId)
        #expect(result["reason"] == "api_EX402", "HTTP \(status): \(result)")
        #expect(try await live.backend.records("actions").isEmpty, "no answer is posted without the VIP status")
    }

    /// What is not the answer shape stays `unknown_response`, and 401/403 the session's.
    @Test func otherRepliesKeepTheirReasons() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let cases: [(JSONValue, String)] = [("http404", "unknown_response"), ("malformed", "unknown_response"),
                                           ("unauthorized", "api_unauthorized"), ("forbidden", "api_unauthorized")]
        for (index, (reply, reason)) in cases.enumerated() {
            try await live.backend.fault(["actionsReply": reply])
            let overlayId = try await live.show(live.backend.quiz("tl-other-\(index)")).overlayId
            #expect(try await live.answer(overlayId)["reason"] == .string(reason), "\(reply)")
        }
    }
}
