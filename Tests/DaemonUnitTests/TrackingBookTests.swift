import JSONValue
import SocketIO
import Testing
@testable import InteractiveDaemon

/// The tracking book against test clocks: sessions, each stage once, the render timeout, acks on
/// the wire as they are decided, when they count as delivered (an ack, or the heartbeat's proof),
/// what reaches the store and when, the bounded outbox, and a restart.
@Suite struct TrackingBookTests {
    static let t0 = ContinuousClock.now
    static let nowMs: Int64 = 1_796_032_000_000
    static let delay = Duration.milliseconds(50)

    static func book(connected: Bool = true) -> TrackingBook {
        var book = TrackingBook(deviceId: "device-1", context: ClientContextBase(sdkVersion: "9.9.9", os: "Debian GNU/Linux 12"),
                                renderTimeout: .seconds(5), storeDelay: delay)
        if connected { _ = book.connectionChanged(up: true) }
        return book
    }

    static func received(_ trackingId: String, timelineId: String = "q1", durationSec: Int = 0) -> TrackingEvent {
        .received(trackingId: trackingId, timelineId: timelineId, overlayType: "minigame", emitTimestamp: nowMs - 30,
                  durationSec: durationSec, receivedAt: nowMs)
    }

    /// The acks these effects send now.
    static func sent(_ effects: [TrackingEffect]) -> [PendingAck] {
        effects.compactMap { if case .send(let ack) = $0 { return ack } else { return nil } }
    }

    static func stages(_ effects: [TrackingEffect]) -> [TrackingStage] { sent(effects).map(\.stage) }

    /// The store writes these effects ask for, in order.
    static func writes(_ effects: [TrackingEffect]) -> [TrackingWrite] {
        effects.flatMap { effect -> [TrackingWrite] in if case .store(let writes) = effect { return writes } else { return [] } }
    }

    static func timers(_ effects: [TrackingEffect]) -> [ContinuousClock.Instant] {
        effects.compactMap { if case .armRenderTimer(let at) = $0 { return at } else { return nil } }
    }

    static func storeTimers(_ effects: [TrackingEffect]) -> [ContinuousClock.Instant] {
        effects.compactMap { if case .armStoreTimer(let at) = $0 { return at } else { return nil } }
    }

    static func problems(_ effects: [TrackingEffect]) -> [String] {
        effects.compactMap { if case .log(.problem(let text, _)) = $0 { return text } else { return nil } }
    }

    static func mark(_ sequence: Int, connection: Int = 1) -> SocketIOWriteMark { SocketIOWriteMark(connection: connection, sequence: sequence) }

    /// A book with session `t1` received (its ack sent at mark 1) and shown at t0.
    static func shownBook() -> TrackingBook {
        var book = book()
        let received = book.handle(received("t1"), nowMs: nowMs, now: t0)
        for ack in sent(received) { _ = book.sendOutcome(ack, sent: true, at: mark(1)) }
        _ = book.handle(.shown(trackingId: "t1"), nowMs: nowMs, now: t0)
        return book
    }

    // MARK: received

    @Test func receivedOpensASessionAndSendsItsAckAtOnce() throws {
        var book = Self.book()
        let effects = book.handle(Self.received("t1", durationSec: 30), nowMs: Self.nowMs + 2, now: Self.t0)
        #expect(Self.sent(effects).map(\.trackingId) == ["t1"])
        #expect(Self.stages(effects) == [.received])
        #expect(Self.writes(effects).isEmpty, "nothing is stored on the way out")
        #expect(Self.storeTimers(effects) == [Self.t0 + Self.delay])
        let payload = try #require(Self.sent(effects).first?.json)
        #expect(payload["event"] == "overlay")
        #expect(payload["stage"] == "received")
        #expect(payload["deviceId"] == "device-1")
        #expect(payload["clientContext"]?["platform"] == "linux")
        #expect(payload["clientContext"]?["receiveLatencyMs"] == 30)
        #expect(payload["clientContext"]?["ackLatencyMs"] == 2)
        #expect(book.sessions["t1"]?.durationSec == 30)
        #expect(book.outbox.count == 1)
    }

    @Test func offlineAnAckWaitsAndGoesOutOnceConnected() {
        var book = Self.book(connected: false)
        #expect(Self.sent(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
        #expect(Self.sent(book.connectionChanged(up: true)).map(\.trackingId) == ["t1"])
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

    /// The memory is a ring: past its first round, each new finished session still forgets the oldest.
    @Test func finishedSessionsAreForgottenOldestFirstRoundAfterRound() {
        var book = Self.book()
        let count = 2 * TrackingBook.finishedMemory + 5
        for index in 0..<count {
            _ = book.handle(Self.received("t\(index)"), nowMs: Self.nowMs, now: Self.t0)
            _ = book.handle(.keptOffScreen(trackingId: "t\(index)", reason: "not_targeted"), nowMs: Self.nowMs, now: Self.t0)
        }
        let oldestKept = count - TrackingBook.finishedMemory
        #expect(Self.stages(book.handle(Self.received("t\(oldestKept - 1)"), nowMs: Self.nowMs, now: Self.t0)) == [.received])
        #expect(Self.stages(book.handle(Self.received("t\(oldestKept + 1)"), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
        #expect(Self.stages(book.handle(Self.received("t\(count - 1)"), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
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
        #expect(effects.contains(.log(.render(trackingId: "t1", status: .cancelled, reason: "already_interacted"))))
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
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
        let row = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        _ = book.stored(row, failures: row.map { _ in nil }, now: Self.t0 + Self.delay)
        let timer = book.renderTimerArmed(at: Self.t0 + .seconds(5))
        let effects = book.renderTimerFired(timer, now: Self.t0 + .seconds(5), nowMs: Self.nowMs + 5000)
        let rendered = Self.writes(effects).compactMap { if case .ack(let ack) = $0 { return ack } else { return nil } }
        // The session had a row by then: the ack and the row's end are written before it goes.
        #expect(rendered.map(\.stage) == [.rendered])
        #expect(rendered.first?.json["clientContext"]?["status"] == "timeout")
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
        #expect(Self.timers(effects) == [Self.t0 + .seconds(7)])
        #expect(book.sessions["t1"] == nil && book.sessions["t2"] != nil)
    }

    @Test func aLoadedOverlayRendersOnceAndItsSessionStaysOpenForTheAnswer() throws {
        var book = Self.shownBook()
        _ = book.handle(.attached(trackingId: "t1", at: Self.nowMs + 10), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 30), nowMs: Self.nowMs + 30, now: Self.t0 + .milliseconds(30))
        #expect(Self.stages(effects) == [.rendered])
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["status"] == "success")
        #expect(book.sessions["t1"]?.loadCompleteAt == Self.nowMs + 30)
        // The render timer no longer times it out; a second report sends nothing.
        #expect(book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 90), nowMs: Self.nowMs, now: Self.t0).isEmpty)
        #expect(book.handle(.failed(trackingId: "t1", reason: "x", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    @Test func aFailedLoadIsALoadErrorAtTheRenderStep() throws {
        var book = Self.shownBook()
        let effects = book.handle(.failed(trackingId: "t1", reason: "HTTP 404", at: Self.nowMs + 50), nowMs: Self.nowMs + 50, now: Self.t0)
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["status"] == "failed")
        #expect(book.sessions["t1"] == nil)
        #expect(effects.contains(.log(.render(trackingId: "t1", status: .failed, reason: "load_error"))))
    }

    @Test func cancelledBeforeRenderedSendsRenderedCancelled() throws {
        var book = Self.shownBook()
        let effects = book.handle(.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay"), nowMs: Self.nowMs, now: Self.t0)
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["custom"]?["cancelReason"] == "replaced_by_new_overlay")
        #expect(book.sessions.isEmpty)
    }

    @Test func cancelledAfterRenderedEndsTheSessionWithoutAStage() {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.cancelled(trackingId: "t1", reason: "dismissed"), nowMs: Self.nowMs + 9, now: Self.t0)
        #expect(effects == [.log(.sessionEnded(trackingId: "t1", reason: "dismissed"))])
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
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["actionResult"] == "success")
        #expect(book.sessions.isEmpty)
    }

    @Test func aFailedAnswerSaysWhyAndEndsTheSession() throws {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        let effects = book.handle(.answerFailed(trackingId: "t1", reason: "api_500", step: "submit", at: Self.nowMs + 3),
                                  nowMs: Self.nowMs + 3, now: Self.t0)
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["actionResult"] == "failure")
        #expect(book.sessions.isEmpty)
    }

    @Test func eachAnswerStageGoesOnce() {
        var book = Self.shownBook()
        _ = book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        _ = book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.stages(book.handle(.answerAttempted(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0)).isEmpty)
    }

    // MARK: Delivery

    @Test func anAcknowledgedAckIsDeliveredAndNeverStored() throws {
        var book = Self.book()
        let ack = try #require(Self.sent(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)).first)
        _ = book.sendOutcome(ack, sent: true, at: Self.mark(3))
        let effects = book.acknowledged(ack, now: Self.t0 + .milliseconds(2))
        #expect(effects == [.outboxEmpty])
        #expect(book.deliveredCount == 1)
        #expect(book.acknowledged(ack, now: Self.t0).isEmpty, "once")
        // Its session (open past the delay) gets a row; the ack none.
        let due = book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs)
        #expect(Self.writes(due).map(\.kind) == ["session"])
    }

    /// Issue 21, item 9: without an ack, only the connection's proof counts an ack delivered.
    @Test func theHeartbeatsProofDeliversWhatItCovers() throws {
        var book = Self.book()
        let first = try #require(Self.sent(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)).first)
        let second = try #require(Self.sent(book.handle(Self.received("t2"), nowMs: Self.nowMs, now: Self.t0)).first)
        _ = book.sendOutcome(first, sent: true, at: Self.mark(4))
        _ = book.sendOutcome(second, sent: true, at: Self.mark(9))
        #expect(book.carried(upTo: Self.mark(8), now: Self.t0).isEmpty, "one delivered, one still out")
        #expect(book.outbox.count == 1 && book.deliveredCount == 1)
        // A proof of another connection covers nothing.
        #expect(book.carried(upTo: Self.mark(20, connection: 2), now: Self.t0).isEmpty)
        #expect(book.carried(upTo: Self.mark(9), now: Self.t0).contains(.outboxEmpty))
    }

    @Test func acksSentOnALostConnectionGoAgainInOrderOnTheNext() throws {
        var book = Self.book()
        for id in ["t1", "t2"] {
            for ack in Self.sent(book.handle(Self.received(id), nowMs: Self.nowMs, now: Self.t0)) {
                _ = book.sendOutcome(ack, sent: true, at: Self.mark(1))
            }
        }
        #expect(book.connectionChanged(up: false).isEmpty)
        #expect(Self.sent(book.connectionChanged(up: true)).map(\.trackingId) == ["t1", "t2"])
        // A send that finds the connection down takes tracking offline.
        let ack = try #require(book.outbox.sendable.first)
        _ = book.sendOutcome(ack, sent: false, at: nil)
        #expect(!book.connected)
    }

    // MARK: The store

    @Test func anUndeliveredAckIsStoredAfterTheDelayAndDeletedOnceDelivered() throws {
        var book = Self.book()
        let ack = try #require(Self.sent(book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)).first)
        _ = book.handle(.keptOffScreen(trackingId: "t1", reason: "not_targeted"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.writes(book.storeDue(now: Self.t0 + .milliseconds(10), nowMs: Self.nowMs)).isEmpty, "not yet")
        let due = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        #expect(due.map(\.kind) == ["ack", "ack"], "the session ended before the delay: no row")
        _ = book.stored(due, failures: [nil, nil], now: Self.t0 + Self.delay)
        let delivered = book.acknowledged(ack, now: Self.t0 + Self.delay)
        #expect(Self.storeTimers(delivered).count == 1)
        #expect(Self.writes(book.storeDue(now: Self.t0 + .seconds(1), nowMs: Self.nowMs)) == [.deleteAck(ack)])
    }

    @Test func aSessionOpenPastTheDelayHasItsLaterAcksWrittenBeforeTheyGo() throws {
        var book = Self.shownBook()
        let row = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        #expect(row.map(\.kind) == ["ack", "session"])
        _ = book.stored(row, failures: [nil, nil], now: Self.t0 + Self.delay)
        // rendered: held, written with the row's end (its rendered is out), then sent.
        let effects = book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 80), nowMs: Self.nowMs + 80, now: Self.t0 + .milliseconds(80))
        #expect(Self.sent(effects).isEmpty)
        let written = Self.writes(effects)
        #expect(written.map(\.kind) == ["ack", "session"])
        guard case .session("t1", nil, _)? = written.last else {
            Issue.record("the row stays: \(written)")
            return
        }
        #expect(Self.stages(book.stored(written, failures: [nil, nil], now: Self.t0 + .milliseconds(81))) == [.rendered])
    }

    /// An attach queues the row's new state for the next batch; a `rendered` decided before that
    /// batch writes the row's end at once. The queued state must not follow it into the store: a
    /// row written back after its end would make the next start send `rendered` a second time.
    @Test func aRowEndedByItsRenderIsNotWrittenBackByAnEarlierQueuedState() throws {
        var book = Self.shownBook()
        let row = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        _ = book.stored(row, failures: [nil, nil], now: Self.t0 + Self.delay)
        let attached = book.handle(.attached(trackingId: "t1", at: Self.nowMs + 60), nowMs: Self.nowMs + 60, now: Self.t0 + .milliseconds(60))
        #expect(Self.writes(attached).isEmpty, "the attach goes with the next batch")
        let ended = Self.writes(book.handle(.loaded(trackingId: "t1", at: Self.nowMs + 61), nowMs: Self.nowMs + 61,
                                            now: Self.t0 + .milliseconds(61)))
        #expect(ended.map(\.kind) == ["ack", "session"])
        _ = book.stored(ended, failures: [nil, nil], now: Self.t0 + .milliseconds(62))
        let later = Self.writes(book.storeDue(now: Self.t0 + .seconds(1), nowMs: Self.nowMs + 1_000))
        for write in later {
            if case .session("t1", let state?, _) = write { Issue.record("the ended row is written back: \(state)") }
        }
    }

    @Test func aRefusedWriteIsTriedAgainAndAHeldAckGoesFromMemory() throws {
        var book = Self.shownBook()
        let row = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        _ = book.stored(row, failures: [nil, nil], now: Self.t0 + Self.delay)
        let written = Self.writes(book.handle(.loaded(trackingId: "t1", at: Self.nowMs), nowMs: Self.nowMs, now: Self.t0 + Self.delay))
        let effects = book.stored(written, failures: ["disk full", nil], now: Self.t0 + Self.delay)
        #expect(Self.stages(effects) == [.rendered], "sent from memory")
        #expect(Self.problems(effects).count == 1)
        #expect(book.lastError?.contains("disk full") == true)
        #expect(Self.storeTimers(effects) == [Self.t0 + Self.delay + TrackingBook.storeRetryInterval])
        let retried = Self.writes(book.storeDue(now: Self.t0 + Self.delay + TrackingBook.storeRetryInterval, nowMs: Self.nowMs))
        #expect(retried.map(\.kind) == ["ack"])
    }

    @Test func stoppingStoresEverythingUndeliveredAtOnce() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        let all = Self.writes(book.storeDue(now: Self.t0, nowMs: Self.nowMs, everything: true))
        #expect(all.map(\.kind) == ["ack", "session"])
    }

    // MARK: The outbox

    @Test func theBacklogIsBoundedAndWarnsOncePerBurst() throws {
        var book = Self.book(connected: false)
        for index in 0..<AckOutbox.capacity {
            _ = book.handle(Self.received("t\(index)"), nowMs: Self.nowMs, now: Self.t0)
        }
        #expect(book.outbox.count == AckOutbox.capacity)
        let first = book.handle(Self.received("over-1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(first).count == 1)
        #expect(book.droppedAcks == 1)
        #expect(book.lastError?.contains("backlog full") == true)
        let second = book.handle(Self.received("over-2"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(second).isEmpty)
        #expect(book.outbox.count == AckOutbox.capacity)
        // An ack is delivered: the next drop warns again.
        _ = book.connectionChanged(up: true)
        let ack = try #require(book.outbox.sendable.first)
        _ = book.acknowledged(ack, now: Self.t0)
        _ = book.handle(Self.received("over-3"), nowMs: Self.nowMs, now: Self.t0)
        let third = book.handle(Self.received("over-4"), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.problems(third).count == 1)
        #expect(book.droppedAcks == 3)
    }

    // MARK: Restart

    @Test func aRestartQueuesStoredAcksFirstAndClosesOpenSessions() throws {
        var book = Self.book(connected: false)
        _ = book.handle(Self.received("fresh"), nowMs: Self.nowMs, now: Self.t0)
        let stored = PendingAck(trackingId: "old", stage: .received, payload: ["stage": "received"], created: Self.nowMs - 1000)
        var open = TrackingSession(trackingId: "open", timelineId: "q9", overlayType: "minigame", emitTimestamp: nil,
                                   receivedAt: Self.nowMs - 2000)
        open.sent = [.received]
        var rendered = TrackingSession(trackingId: "rendered", timelineId: "q8", overlayType: "minigame", emitTimestamp: nil,
                                       receivedAt: Self.nowMs - 2000)
        rendered.sent = [.received, .rendered]
        let effects = book.recovered(acks: [stored], sessions: [("open", open.stored), ("rendered", rendered.stored),
                                                                ("broken", ["nonsense": true])], nowMs: Self.nowMs, now: Self.t0)
        // The open session's `rendered` `cancelled` is written with its row's end before it goes.
        let closing = Self.writes(effects)
        guard case .ack(let restart)? = closing.first else {
            Issue.record("no restart ack: \(closing)")
            return
        }
        #expect(restart.trackingId == "open")
        #expect(restart.json["clientContext"]?["custom"]?["cancelReason"] == "daemon_restart")
        #expect(closing.contains(.session("open", state: nil, at: Self.nowMs)))
        #expect(effects.contains(.log(.recovered(acks: 1, sessions: 3, closed: 1))))
        let later = Self.writes(book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs))
        #expect(later.contains(.session("rendered", state: nil, at: Self.nowMs)))
        #expect(later.contains(.session("broken", state: nil, at: Self.nowMs)))
        // The stored ack waits before the fresh one.
        #expect(book.outbox.sendable.map(\.trackingId).prefix(2) == ["old", "fresh"])
    }

    @Test func aRestartWithNothingStoredSaysNothing() {
        var book = Self.book()
        #expect(book.recovered(acks: [], sessions: [], nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    // MARK: Status

    @Test func theStatusCountsSessionsAcksAndProblems() {
        var book = Self.book()
        _ = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        #expect(book.note("disk full") == .problem("disk full", trackingId: nil))
        // 2 on their way, with t1's ack and its session, within the store's delay.
        let status = book.status(unstoredWrites: 2)
        #expect(status == ["openSessions": 1, "pendingAcks": 1, "delivered": 0, "droppedAcks": 0, "connected": true,
                           "unstoredWrites": 4, "lastError": "disk full"])
        _ = book.storeDue(now: Self.t0 + Self.delay, nowMs: Self.nowMs)
        #expect(book.status(unstoredWrites: 0)["unstoredWrites"] == 0, "both are being written")
    }

    @Test func theContextFollowsTheViewportAndDeviceClass() throws {
        var book = Self.book()
        book.context.viewportWidth = 1280
        book.context.viewportHeight = 720
        book.context.deviceClass = "tv"
        let effects = book.handle(Self.received("t1"), nowMs: Self.nowMs, now: Self.t0)
        let context = try #require(Self.sent(effects).first?.json["clientContext"])
        #expect(context["viewportWidth"] == 1280)
        #expect(context["viewportHeight"] == 720)
        #expect(context["deviceClass"] == "tv")
    }
}

extension TrackingWrite {
    /// `ack`, `session` or `delete`, for tests that read a batch's shape.
    var kind: String {
        switch self {
        case .ack: return "ack"
        case .session: return "session"
        case .deleteAck: return "delete"
        }
    }
}

extension PendingAck {
    /// The payload's text parsed (null when it is not JSON, which a test then sees).
    var json: JSONValue { (try? JSONValue.parse(payload)) ?? .null }
}
