import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveClient

@Suite struct SubscriptionTrackerTests {
    private func reply(_ bootId: String, _ seq: Int) -> SubscribeResult {
        SubscribeResult(bootId: bootId, seq: seq, snapshot: ["bootId": .string(bootId)])
    }

    private func event(_ bootId: String, _ seq: Int?) -> EventEnvelope {
        EventEnvelope(bootId: bootId, seq: seq, type: "overlay.show", time: "", data: [:])
    }

    @Test func theFirstSubscriptionStartsAfterItsSnapshot() {
        var tracker = SubscriptionTracker(since: nil)
        #expect(tracker.subscribed(reply("b1", 7)) == [.subscribed(reply("b1", 7))])
        #expect(tracker.lastSeq == 7)
        #expect(tracker.bootId == "b1")
    }

    @Test func eventsMoveTheResumePoint() {
        var tracker = SubscriptionTracker(since: nil)
        _ = tracker.subscribed(reply("b1", 7))
        #expect(tracker.received(event("b1", 9)) == .event(event("b1", 9)))
        #expect(tracker.lastSeq == 9)
        _ = tracker.received(event("b1", nil))
        #expect(tracker.lastSeq == 9)
    }

    @Test func aReconnectionToTheSameBootKeepsTheResumePoint() {
        var tracker = SubscriptionTracker(since: nil)
        _ = tracker.subscribed(reply("b1", 7))
        _ = tracker.received(event("b1", 8))
        // The daemon moved on to 12 meanwhile; events 9…12 are replayed after the reply.
        #expect(tracker.subscribed(reply("b1", 12)) == [.subscribed(reply("b1", 12))])
        #expect(tracker.lastSeq == 8)
    }

    @Test func aNewBootIsARestartAndStartsAfterTheNewSnapshot() {
        var tracker = SubscriptionTracker(since: nil)
        _ = tracker.subscribed(reply("b1", 7))
        _ = tracker.received(event("b1", 40))
        #expect(tracker.subscribed(reply("b2", 3)) == [.restarted(previousBootId: "b1", bootId: "b2"), .subscribed(reply("b2", 3))])
        #expect(tracker.lastSeq == 3)
        #expect(tracker.bootId == "b2")
    }

    @Test func aCallersSinceIsKeptForTheFirstSubscription() {
        var tracker = SubscriptionTracker(since: 5)
        _ = tracker.subscribed(reply("b1", 9))
        #expect(tracker.lastSeq == 5)
    }
}
