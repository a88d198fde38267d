import Testing
@testable import InteractiveDaemon

/// The backend's events against the interactive status requested at join: they wait, in order,
/// from the first overlay on, and come back in that order.
@Suite struct InteractiveStatusGateTests {
    typealias Gate = InteractiveStatusGate<String>

    static func drain(_ gate: inout Gate) -> [String] {
        var out: [String] = []
        while let next = gate.next() { out.append(next) }
        return out
    }

    @Test func withoutARequestEverythingPassesAtOnce() {
        var gate = Gate()
        let outcome1 = gate.admit("overlay-1", isOverlay: true)
        #expect(outcome1)
        let outcome2 = gate.admit("recall", isOverlay: false)
        #expect(outcome2)
        #expect(!gate.isWaiting)
        let outcome3 = gate.next()
        #expect(outcome3 == nil)
    }

    @Test func eventsBeforeTheFirstOverlayPassWhileWaiting() {
        var gate = Gate()
        _ = gate.request()
        #expect(gate.isWaiting)
        let outcome1 = gate.admit("predict-result", isOverlay: false)
        #expect(outcome1)
        #expect(gate.heldCount == 0)
    }

    @Test func fromTheFirstOverlayOnEverythingWaitsAndComesBackInOrder() {
        var gate = Gate()
        let request = gate.request()
        let outcome1 = gate.admit("overlay-1", isOverlay: true)
        #expect(!outcome1)
        let outcome2 = gate.admit("recall-1", isOverlay: false)
        #expect(!outcome2)
        let outcome3 = gate.admit("overlay-2", isOverlay: true)
        #expect(!outcome3)
        #expect(gate.heldCount == 3)
        let outcome4 = gate.next()
        #expect(outcome4 == nil)
        let outcome5 = gate.arrived(request)
        #expect(outcome5)
        #expect(Self.drain(&gate) == ["overlay-1", "recall-1", "overlay-2"])
        #expect(!gate.isWaiting)
        let outcome6 = gate.admit("overlay-3", isOverlay: true)
        #expect(outcome6)
    }

    @Test func eventsArrivingWhileDrainingQueueBehindTheHeldOnes() {
        var gate = Gate()
        let request = gate.request()
        _ = gate.admit("overlay-1", isOverlay: true)
        _ = gate.admit("overlay-2", isOverlay: true)
        let outcome1 = gate.arrived(request)
        #expect(outcome1)
        let outcome2 = gate.next()
        #expect(outcome2 == "overlay-1")
        // Not an overlay, but the held ones come first.
        let outcome3 = gate.admit("update-result", isOverlay: false)
        #expect(!outcome3)
        #expect(Self.drain(&gate) == ["overlay-2", "update-result"])
        let outcome4 = gate.admit("later", isOverlay: false)
        #expect(outcome4)
    }

    @Test func aStaleReplyReleasesNothing() {
        var gate = Gate()
        let first = gate.request()
        _ = gate.admit("overlay-1", isOverlay: true)
        let second = gate.request()
        let outcome1 = gate.arrived(first)
        #expect(!outcome1)
        let outcome2 = gate.next()
        #expect(outcome2 == nil)
        #expect(gate.isWaiting)
        let outcome3 = gate.arrived(second)
        #expect(outcome3)
        #expect(Self.drain(&gate) == ["overlay-1"])
    }

    @Test func aRequestMadeWhileDrainingIsWaitedForAfterTheDrain() {
        var gate = Gate()
        let first = gate.request()
        _ = gate.admit("overlay-1", isOverlay: true)
        let outcome1 = gate.arrived(first)
        #expect(outcome1)
        let second = gate.request()
        #expect(Self.drain(&gate) == ["overlay-1"])
        #expect(gate.isWaiting)
        let outcome2 = gate.admit("overlay-2", isOverlay: true)
        #expect(!outcome2)
        let outcome3 = gate.arrived(second)
        #expect(outcome3)
        #expect(Self.drain(&gate) == ["overlay-2"])
    }

    @Test func aReplyWithNothingHeldOpensTheGate() {
        var gate = Gate()
        let request = gate.request()
        let outcome1 = gate.arrived(request)
        #expect(outcome1)
        let outcome2 = gate.next()
        #expect(outcome2 == nil)
        #expect(!gate.isWaiting)
        let outcome3 = gate.admit("overlay", isOverlay: true)
        #expect(outcome3)
    }

    @Test func releasingStopsWaitingAndHandsBackTheHeldEvents() {
        var gate = Gate()
        let request = gate.request()
        _ = gate.admit("overlay-1", isOverlay: true)
        gate.release()
        #expect(gate.pendingRequest == nil)
        #expect(Self.drain(&gate) == ["overlay-1"])
        // The reply that comes later changes nothing.
        let outcome1 = gate.arrived(request)
        #expect(!outcome1)
        let outcome2 = gate.admit("overlay-2", isOverlay: true)
        #expect(outcome2)
    }

    @Test func tooManyHeldEventsOverflow() {
        var gate = Gate()
        _ = gate.request()
        for index in 0..<Gate.maxHeld { _ = gate.admit("overlay-\(index)", isOverlay: true) }
        #expect(!gate.overflowed)
        _ = gate.admit("one-more", isOverlay: true)
        #expect(gate.overflowed)
        gate.release()
        let drained = Self.drain(&gate)
        #expect(drained.count == Gate.maxHeld + 1)
        #expect(drained.first == "overlay-0")
        #expect(drained.last == "one-more")
    }

    @Test func resetDropsTheHeldEventsAndOpens() {
        var gate = Gate()
        let request = gate.request()
        _ = gate.admit("overlay-1", isOverlay: true)
        gate.reset()
        #expect(gate.heldCount == 0)
        #expect(!gate.isWaiting)
        let outcome1 = gate.arrived(request)
        #expect(!outcome1)
        let outcome2 = gate.admit("overlay-2", isOverlay: true)
        #expect(outcome2)
    }
}
