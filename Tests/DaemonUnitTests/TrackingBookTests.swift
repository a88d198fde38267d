import JSONValue
import Testing
@testable import InteractiveDaemon

/// The tracking book against test clocks: sessions, each stage once, the render timeout, what is
/// stored, the bounded outbox and delivery results.
@Suite struct TrackingBookTests {
    static let t0 = ContinuousClock.now
    static let nowMs: Int64 = 1_796_032_000_000

    static func book() -> TrackingBook {
        TrackingBook(deviceId: "device-1", context: ClientContextBase(sdkVersion: "9.9.9", os: "Debian GNU/Linux 12"),
                     renderTimeout: .seconds(5))
    }

    static func received(_ trackingId: String, timelineId: String = "q1", durationSec: Int = 0) -> TrackingEvent {
        .received(trackingId: trackingId, timelineId: timelineId, overlayType: "minigame", emitTimestamp: nowMs - 30,
                  durationSec: durationSec, receivedAt: nowMs)
    }

    /// The acks queued by these effects: tracking id, stage, and whether the session stays open.
    static func acks(_ effects: [TrackingEffect]) -> [(String, TrackingStage, Bool)] {
        effects.compactMap {
            if case .store(.ack(let ack, let state, _)) = $0 { return (ack.trackingId, ack.stage, state != nil) } else { return nil }
        }
    }

    static func stages(_ effects: [TrackingEffect]) -> [TrackingStage] { acks(effects).map(\.1) }

    static func payloads(_ effects: [TrackingEffect]) -> [JSONValue] {
        effects.compactMap { if case .store(.ack(let ack, _, _)) = $0 { return ack.payload } else { return nil } }
    }

    static func timers(_ effects: [TrackingEffect]) -> [ContinuousClock.Instant] {
        effects.compactMap { if case .armRenderTimer(let at) = $0 { return at } else { return nil } }
    }

    static func problems(_ effects: [TrackingEffect]) -> [String] {
        effects.compactMap { if case .log(.problem(let text, _)) = $0 { return text } else { return nil } }
    }

    static func deletes(_ effects: [TrackingEffect]) -> [PendingAck] {
        effects.compactMap { if case .store(.deleteAck(let ack)) = $0 { return ack } else { return nil } }
    }

    /// A book with session `t1` received and shown at t0.
    static func shownBook() -> TrackingBook {
        var book = book()
        _ = book.handle(received("t1"), nowMs: nowMs, now: t0)
        _ = book.handle(.shown(trackingId: "t1"), nowMs: nowMs, now: t0)
        return book
    }

    // MARK: received

    @Test func receivedOpensASessionAndQueuesItsAckWithTheSessionsState() throws {
        var book = Self.book()
        let effects = book.handle(Self.received("t1", durationSec: 30), nowMs: Self.nowMs + 2, now: Self.t0)
        #expect(Self.acks(effects).map(\.0) == ["t1"])
        #expect(Self.stages(effects) == [.received])
        #expect(Self.acks(effects).first?.2 == true)
        #expect(effects.contains(.log(.ackQueued(trackingId: "t1", stage: .received))))
        #expect(effects.last == .status)
        let payload = try #require(Self.payloads(effects).first)
        #expect(payload["event"] == "overlay")
        #expect(payload["stage"] == "received")
        #expect(payload["deviceId"] == "device-1")
        #expect(payload["clientContext"]?["platform"] == "linux")
        #expect(payload["clientContext"]?["receiveLatencyMs"] == 30)
        #expect(payload["clientContext"]?["ackLatencyMs"] == 2)
        #expect(book.sessions["t1"]?.durationSec == 30)
        #expect(book.outbox.count == 1)
    }

    @Test func aRepeatedReceivedIsNotTrackedAgain() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0) == [.log(.alreadyKnown(trackingId: "t1"))])
    }

    @Test func aFinishedSessionIsNotOpenedAgain() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(.keptOffScreen(trackingId: "t1", reason: "not_targeted"), nowMs: Self.nowMs, now: Self.t0)
        #expect(book.sessions.isEmpty)
        #expect(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0) == [.log(.alreadyKnown(trackingId: "t1"))])
    }

    @Test func finishedSessionsAreRememberedWithinABound() {
        var book = Self.book()
        for index in 0...TrackingBook.finishedMemory {
            _ = book.handle(Self.received("t\(index)"), nowMs: Self.nowMs, now: Self.t0)
            _ = book.handle(.keptOffScreen(trackingId: "t\(index)", reason: "not_targeted"), nowMs: Self.nowMs, now: Self.t0)
        }
        // The oldest was forgotten: a new emit of it opens a session again; the newest not.
        #expect(Self.stages(book.handle(Self.received("t0"), nowMs: Self.nowMs, now: Self.t0)) == [.received])
        #expect(Self.stages(book.handle(Self.received("t\(TrackingBook.finishedMemory)"), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
    }

    @Test func eventsOfAnUnknownSessionAreIgnored() {
        var book = Self.book()
        for event: TrackingEvent in [.shown(trackingId: "x"), .attached(trackingId: "x", at: 1), .loaded(trackingId: "x", at: 1),
                                     .failed(trackingId: "x", reason: nil, at: 1), .cancelled(trackingId: "x", reason: "dismissed"),
                                     .keptOffScreen(trackingId: "x", reason: "r"), .answerAttempted(trackingId: "x", at: 1),
                                     .answerSucceeded(trackingId: "x", at: 1),
                                     .answerFailed(trackingId: "x", reason: "api_500", step: "submit", at: 1)] {
            #expect(book.handle(event, nowMs: Self.nowMs, now: Self.t0).isEmpty)
        }
    }

    // MARK: rendered

    @Test func keptOffScreenSendsRenderedCancelledAndEndsTheSession() throws {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.keptOffScreen(trackingId: "t1", reason: "already_interacted"), nowMs: Self.nowMs + 5, now: Self.t0)
        #expect(Self.stages(effects) == [.rendered])
        // The session's row goes with the ack.
        #expect(Self.acks(effects).first?.2 == false)
        #expect(effects.contains(.log(.render(trackingId: "t1", status: .cancelled, reason: "already_interacted"))))
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["status"] == "cancelled")
        #expect(context["custom"]?["cancelReason"] == "already_interacted")
        #expect(book.sessions["t1"] == nil)
    }

    @Test func shownArmsTheRenderTimeoutOnce() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.shown(trackingId: "t1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(effects == [.armRenderTimer(at: Self.t0 + .seconds(5))])
        #expect(book.handle(.shown(trackingId: "t1"), nowMs: Self.nowMs, now: Self.t0 + .seconds(1)).isEmpty)
    }

    @Test func aRenderNotReportedInTimeTimesOut() throws {
        var book = Self.shownBook()
        let timer = book.renderTimerArmed(at: Self.t0 + .seconds(5))
        let effects = book.renderTimerFired(timer, now: Self.t0 + .seconds(5), nowMs: Self.nowMs + 5000)
        #expect(Self.stages(effects) == [.rendered])
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["status"] == "timeout")
        #expect(book.sessions["t1"] == nil)
        // A load report after the timeout sends nothing.
        #expect(book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 6000), nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    @Test func aReplacedRenderTimerDoesNothing() {
        var book = Self.shownBook()
        let stale = book.renderTimerArmed(at: Self.t0 + .seconds(5))
        _ = book.renderTimerArmed(at: Self.t0 + .seconds(5))
        #expect(book.renderTimerFired(stale, now: Self.t0 + .seconds(9), nowMs: Self.nowMs).isEmpty)
    }

    @Test func rendersTimeOutEachAtItsTimeWithOneTimer() {
        var book = Self.shownBook()
        let first = book.renderTimerArmed(at: Self.t0 + .seconds(5))
        _ = book.handle(Self.received("t2"), nowMs: Self.nowMs, now: Self.t0)
        #expect(book.handle(.shown(trackingId: "t2"), nowMs: Self.nowMs, now: Self.t0 + .seconds(2)).isEmpty)
        let effects = book.renderTimerFired(first, now: Self.t0 + .seconds(5), nowMs: Self.nowMs)
        #expect(Self.acks(effects).map(\.0) == ["t1"])
        #expect(Self.timers(effects) == [Self.t0 + .seconds(7)])
    }

    @Test func aLoadedOverlayRendersOnceAndItsSessionStaysOpenForTheAnswer() throws {
        var book = Self.shownBook()
        _ = book.handle(.attached(trackingId: "t1", at: Self.nowMs + 10), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 80), nowMs: Self.nowMs + 80, now: Self.t0)
        #expect(Self.stages(effects) == [.rendered])
        #expect(Self.acks(effects).first?.2 == true)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["status"] == "success")
        #expect(book.sessions["t1"]?.loadCompleteAt == Self.nowMs + 80)
        // The render timer no longer times it out; a second report sends nothing.
        #expect(book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 90), nowMs: Self.nowMs, now: Self.t0).isEmpty)
        #expect(book.handle(.failed(trackingId: "t1", reason: "x", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    @Test func aFailedLoadIsALoadErrorAtTheRenderStep() throws {
        var book = Self.shownBook()
        let effects = book.handle(.failed(trackingId: "t1", reason: "HTTP 404", at: Self.nowMs + 50), nowMs: Self.nowMs + 50, now: Self.t0)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["status"] == "failed")
        #expect(book.sessions["t1"] == nil)
        #expect(effects.contains(.log(.render(trackingId: "t1", status: .failed, reason: "load_error"))))
    }

    @Test func attachedIsStoredOnceBeforeRendered() {
        var book = Self.shownBook()
        let effects = book.handle(.attached(trackingId: "t1", at: Self.nowMs + 10), nowMs: Self.nowMs + 10, now: Self.t0)
        guard case .store(.session("t1", let state?, Self.nowMs + 10))? = effects.first else {
            Issue.record("expected the session's state to be stored, got \(effects)")
            return
        }
        #expect(state["attachedAt"] == .number(Double(Self.nowMs + 10)))
        #expect(book.handle(.attached(trackingId: "t1", at: Self.nowMs + 20), nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    @Test func cancelledBeforeRenderedSendsRenderedCancelled() throws {
        var book = Self.shownBook()
        let effects = book.handle(.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay"), nowMs: Self.nowMs, now: Self.t0)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["custom"]?["cancelReason"] == "replaced_by_new_overlay")
        #expect(book.sessions.isEmpty)
    }

    @Test func cancelledAfterRenderedEndsTheSessionWithoutAStage() {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.cancelled(trackingId: "t1", reason: "dismissed"), nowMs: Self.nowMs + 9, now: Self.t0)
        #expect(effects == [.log(.sessionEnded(trackingId: "t1", reason: "dismissed")),
                            .store(.session("t1", state: .none, at: Self.nowMs + 9)), .status])
        #expect(book.sessions.isEmpty)
    }

    // MARK: Answers

    @Test func anAnswerWaitsForItsResultThroughACancel() throws {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.stages(book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs + 1), nowMs: Self.nowMs, now: Self.t0)) == [.answer])
        // The overlay goes while the answer's result is still to come: the session stays.
        #expect(book.handle(.cancelled(trackingId: "t1", reason: "interactive_hide"), nowMs: Self.nowMs, now: Self.t0).isEmpty)
        let effects = book.handle(.answerSucceeded(trackingId: "t1", at: Self.nowMs + 2), nowMs: Self.nowMs + 2, now: Self.t0)
        #expect(Self.stages(effects) == [.answerSucceeded])
        #expect(Self.acks(effects).first?.2 == false)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["actionResult"] == "success")
        #expect(book.sessions.isEmpty)
    }

    @Test func aFailedAnswerSaysWhyAndEndsTheSession() throws {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.answerFailed(trackingId: "t1", reason: "api_500", step: "submit", at: Self.nowMs + 3),
                                  nowMs: Self.nowMs + 3, now: Self.t0)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["actionResult"] == "failure")
        #expect(book.sessions.isEmpty)
    }

    @Test func eachAnswerStageGoesOnce() {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.stages(book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
    }

    // MARK: The outbox

    @Test func theBacklogIsBoundedAndWarnsOncePerBurst() {
        var book = Self.book()
        for index in 0..<AckOutbox.capacity {
            _ = book.handle(Self.received("t\(index)"), nowMs: Self.nowMs, now: Self.t0)
        }
        #expect(book.outbox.count == AckOutbox.capacity)
        let first = book.handle(Self.received("over-1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(first).count == 1)
        #expect(Self.deletes(first).map(\.trackingId) == ["t0"])
        #expect(book.droppedAcks == 1)
        #expect(book.lastError?.contains("backlog full") == true)
        let second = book.handle(Self.received("over-2"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(second).isEmpty)
        #expect(Self.deletes(second).map(\.trackingId) == ["t1"])
        #expect(book.outbox.count == AckOutbox.capacity)
        // An ack goes out: the next drop warns again.
        let delivered = book.delivered(PendingAck(trackingId: "t2", stage: .received, payload: [:], created: Self.nowMs), confirmed: true)
        #expect(delivered.contains(.status))
        _ = book.handle(Self.received("over-3"), nowMs: Self.nowMs, now: Self.t0)
        let third = book.handle(Self.received("over-4"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(third).count == 1)
        #expect(book.droppedAcks == 3)
    }

    @Test func aDeliveredAckIsDeletedCountedAndEmptiesTheOutbox() throws {
        var book = Self.book()
        let received = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        guard case .store(.ack(let ack, _, _))? = received.first(where: { if case .store = $0 { return true } else { return false } }) else {
            Issue.record("no ack queued")
            return
        }
        // Not sendable before it is stored.
        #expect(book.outbox.next(for: "t1") == nil)
        book.outbox.markStored(ack)
        #expect(book.outbox.next(for: "t1") == ack)
        let effects = book.delivered(ack, confirmed: false)
        #expect(effects == [.outboxEmpty, .log(.delivered(trackingId: "t1", stage: .received, confirmed: false)),
                            .store(.deleteAck(ack)), .status])
        #expect(book.deliveredCount == 1)
        // Delivered twice (a lane of an older connection): nothing.
        #expect(book.delivered(ack, confirmed: true).isEmpty)
    }

    @Test func anAckDeliveredWhileOthersWaitDoesNotEmptyTheOutbox() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(Self.received("t2"), nowMs: Self.nowMs, now: Self.t0)
        let ack = PendingAck(trackingId: "t1", stage: .received, payload: [:], created: Self.nowMs)
        #expect(!book.delivered(ack, confirmed: true).contains(.outboxEmpty))
    }

    // MARK: Restart

    @Test func aRestartQueuesStoredAcksFirstAndClosesOpenSessions() throws {
        var book = Self.book()
        _ = book.handle(Self.received("fresh"), nowMs: Self.nowMs, now: Self.t0)
        let stored = PendingAck(trackingId: "old", stage: .received, payload: ["stage": "received"], created: Self.nowMs - 1000)
        var open = TrackingSession(trackingId: "open", timelineId: "q9", overlayType: "minigame", emitTimestamp: nil,
                                   receivedAt: Self.nowMs - 2000)
        open.sent = [.received]
        var rendered = TrackingSession(trackingId: "rendered", timelineId: "q8", overlayType: "minigame", emitTimestamp: nil,
                                       receivedAt: Self.nowMs - 2000)
        rendered.sent = [.received, .rendered]
        let effects = book.recovered(acks: [stored], sessions: [("open", open.stored), ("rendered", rendered.stored),
                                                                ("broken", ["nonsense": true])], nowMs: Self.nowMs)
        #expect(Self.acks(effects).map(\.0) == ["open"])
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["custom"]?["cancelReason"] == "daemon_restart")
        #expect(effects.contains(.store(.session("rendered", state: .none, at: Self.nowMs))))
        #expect(effects.contains(.store(.session("broken", state: .none, at: Self.nowMs))))
        #expect(effects.contains(.log(.recovered(acks: 1, sessions: 3, closed: 1))))
        #expect(effects.last == .status)
        // The stored ack waits before the fresh one, and is sendable at once.
        #expect(book.outbox.next(for: "old") == stored)
        #expect(book.outbox.claimLanes(upTo: 8) == ["old"])
    }

    @Test func aRestartWithNothingStoredSaysNothing() {
        var book = Self.book()
        #expect(book.recovered(acks: [], sessions: [], nowMs: Self.nowMs) == [.status])
    }

    // MARK: Status

    @Test func theStatusCountsSessionsAcksAndProblems() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(book.note("disk full") == .problem("disk full", trackingId: nil))
        let status = book.status(connected: true, unstoredWrites: 2)
        #expect(status == ["openSessions": 1, "pendingAcks": 1, "delivered": 0, "droppedAcks": 0, "connected": true,
                           "unstoredWrites": 2, "lastError": "disk full"])
    }

    @Test func theContextFollowsTheViewportAndDeviceClass() throws {
        var book = Self.book()
        book.context.viewportWidth = 1280
        book.context.viewportHeight = 720
        book.context.deviceClass = "tv"
        let effects = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        let context = try #require(Self.payloads(effects).first?["clientContext"])
        #expect(context["viewportWidth"] == 1280)
        #expect(context["viewportHeight"] == 720)
        #expect(context["deviceClass"] == "tv")
    }
}
