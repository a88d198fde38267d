import JSONValue
import Runtime
import SocketIO

/// A log line the tracking book asks for (built by the shell only when its level is on).
enum TrackingLogLine: Sendable, Equatable {
    /// A `received` for a session already open or recently finished (debug).
    case alreadyKnown(trackingId: String)
    /// How `rendered` ended (info).
    case render(trackingId: String, status: RenderStatus, reason: String?)
    /// A session ended without a stage (debug).
    case sessionEnded(trackingId: String, reason: String)
    /// An ack dropped because the backlog is full (debug).
    case ackDropped(trackingId: String, stage: TrackingStage)
    /// What a restart recovered (info).
    case recovered(acks: Int, sessions: Int, closed: Int)
    /// A problem, also kept as the status's `lastError` (warning).
    case problem(String, trackingId: String?)
}

/// What the tracking book asks its shell (`Tracker`) to do, in order.
indirect enum TrackingEffect: Sendable, Equatable {
    /// Emit this ack now on the connection (`Tracker` then reports where it was written).
    case send(PendingAck)
    /// Write these changes to the store, in one transaction, off the loop; report the outcome
    /// with `stored`.
    case store([TrackingWrite])
    /// Arm the one render timer for this instant (`renderTimerArmed`, then `renderTimerFired`).
    case armRenderTimer(at: ContinuousClock.Instant)
    /// Arm the store timer for this instant (then `storeDue`); a later one replaces it.
    case armStoreTimer(at: ContinuousClock.Instant)
    case log(TrackingLogLine)
    /// Every ack is delivered: callers of `drain` may return.
    case outboxEmpty
}

/// emit-ack tracking's decisions as a pure state machine (BACKEND.md "emit-ack tracking"): one
/// session per `_trackingId`, each stage at most once, the render timeout, which acks wait (the
/// outbox, bounded), when they count as delivered, and what the store must hold so that a
/// restart loses nothing (at least once) and closes every session left open.
///
/// The store is kept off the hot path. An ack goes on the wire as soon as it is decided, and
/// reaches the store only when it is still undelivered `storeDelay` later (the server is slow,
/// or the connection down); a session gets a row only when it is still open, its `rendered` not
/// sent, `storeDelay` after it began (what a restart must close). An overlay received and
/// replaced while the backend acknowledges at once costs the store nothing. Once a session has a
/// row, its later acks are written with its new state before they are sent, so that a restart
/// never sends a stage the server already has.
///
/// Delivered means acknowledged by the server, or proven carried by the connection (the
/// heartbeat: `SocketIOClientUpdate.carried`) for servers that do not acknowledge: an ack on a
/// connection that went silent is never counted delivered, and goes out again on the next one.
///
/// Times come in: `nowMs` (the wall clock acks carry) and `now` (the monotonic clock of the
/// render timeout and the store's delay).
struct TrackingBook: Sendable {
    /// Recently finished sessions remembered, so that a repeated `received` does not open them again.
    static let finishedMemory = 1024

    let deviceId: String
    var context: ClientContextBase
    let renderTimeout: Duration
    /// How long an undelivered ack, or an open session, waits before it is stored.
    let storeDelay: Duration
    private(set) var sessions: [String: TrackingSession] = [:]
    /// When each open session began (monotonic), for the store's delay: apart from the session,
    /// which holding a `ContinuousClock.Instant` would make a type the compiler copies by its
    /// value witnesses (the standard library keeps the instant's layout to itself).
    private var sessionsOpenedAt: [String: ContinuousClock.Instant] = [:]
    /// Sessions with a row in the store (written or being written).
    private(set) var storedSessions: Set<String> = []
    /// When each shown overlay's render times out, by tracking id.
    private var renderDeadlines = DeadlineSchedule<String>()
    private var finishedIds: Set<String> = []
    /// The ids of `finishedIds` in a ring, oldest at `finishedOldest` once it is full.
    private var finishedOrder: [String] = []
    private var finishedOldest = 0
    /// The acks not yet delivered.
    private(set) var outbox = AckOutbox()
    /// Store changes decided and not yet handed to the store (deletions of delivered acks and
    /// ended sessions' rows): they go with the next batch.
    private var pendingChanges: [TrackingWrite] = []
    /// Whether acks go out now (a connection is up).
    private(set) var connected = false
    private(set) var deliveredCount = 0
    /// Acks dropped because the backlog was full, in all and since an ack last went out.
    private(set) var droppedAcks = 0
    private var droppedSinceDelivery = 0
    private(set) var lastError: String?
    /// When the oldest of `pendingChanges` is due (nil: none).
    private var pendingChangesDue: ContinuousClock.Instant?
    /// After the store refused a write (a full disk), it is not asked again before this.
    private var storeRestsUntil: ContinuousClock.Instant?
    /// The store timer armed, so that it is armed again only for an earlier moment.
    private var storeTimerAt: ContinuousClock.Instant?

    init(deviceId: String, context: ClientContextBase, renderTimeout: Duration, storeDelay: Duration = .milliseconds(50)) {
        self.deviceId = deviceId
        self.context = context
        self.renderTimeout = renderTimeout
        self.storeDelay = storeDelay
    }

    // MARK: Events

    /// One event of the overlay pipeline.
    mutating func handle(_ event: TrackingEvent, nowMs: Int64, now: ContinuousClock.Instant) -> [TrackingEffect] {
        var effects: [TrackingEffect] = []
        switch event {
        case .received(let trackingId, let timelineId, let overlayType, let emitTimestamp, let durationSec, let receivedAt):
            guard sessions[trackingId] == nil, !finishedIds.contains(trackingId) else {
                effects.append(.log(.alreadyKnown(trackingId: trackingId)))
                break
            }
            var session = TrackingSession(trackingId: trackingId, timelineId: timelineId, overlayType: overlayType,
                                          emitTimestamp: emitTimestamp, receivedAt: receivedAt)
            session.durationSec = durationSec > 0 ? durationSec : nil
            sessionsOpenedAt[trackingId] = now
            emit(.received, of: session, finishing: false, nowMs: nowMs, now: now, into: &effects) { $0.writeReceived(ackSent: $1, to: &$2, stamps: &$3) }
        case .keptOffScreen(let trackingId, let reason):
            settleRender(trackingId, RenderOutcome(status: .cancelled, at: nowMs, cancelReason: reason), nowMs: nowMs, now: now,
                         into: &effects)
        case .shown(let trackingId):
            guard let session = sessions[trackingId], !session.renderedSent, !renderDeadlines.contains(trackingId) else { break }
            if let target = renderDeadlines.set(trackingId, at: now + renderTimeout) { effects.append(.armRenderTimer(at: target)) }
        case .attached(let trackingId, let at):
            guard var session = sessions[trackingId], !session.renderedSent, session.attachedAt == nil else { break }
            session.attachedAt = at
            sessions[trackingId] = session
            // A stored session's row follows (a restart's `rendered` carries what is known).
            if storedSessions.contains(trackingId) { queue(.session(trackingId, state: session.stored, at: nowMs), now: now, into: &effects) }
        case .loaded(let trackingId, let at):
            settleRender(trackingId, RenderOutcome(status: .success, at: at), loadCompleteAt: at, nowMs: nowMs, now: now, into: &effects)
        case .failed(let trackingId, let reason, let at):
            let outcome = RenderOutcome(status: .failed, at: at, failureReason: "load_error", failureStep: "render", detail: reason)
            settleRender(trackingId, outcome, nowMs: nowMs, now: now, into: &effects)
        case .cancelled(let trackingId, let reason):
            cancelled(trackingId, reason: reason, nowMs: nowMs, now: now, into: &effects)
        case .answerAttempted(let trackingId, let at):
            answer(trackingId, AnswerOutcome(stage: .answer, at: at), finishing: false, nowMs: nowMs, now: now, into: &effects)
        case .answerSucceeded(let trackingId, let at):
            answer(trackingId, AnswerOutcome(stage: .answerSucceeded, at: at), finishing: true, nowMs: nowMs, now: now, into: &effects)
        case .answerFailed(let trackingId, let reason, let step, let at):
            let outcome = AnswerOutcome(stage: .answerFailed, at: at, failureReason: reason, failureStep: step)
            answer(trackingId, outcome, finishing: true, nowMs: nowMs, now: now, into: &effects)
        }
        return effects
    }

    /// The overlay went away. Before `rendered`: `rendered` `cancelled`. After it: the session
    /// ends without a stage, unless an answer was sent and its result is still to come.
    private mutating func cancelled(_ trackingId: String, reason: String, nowMs: Int64, now: ContinuousClock.Instant,
                                    into effects: inout [TrackingEffect]) {
        guard let session = sessions[trackingId] else { return }
        guard session.renderedSent else {
            settleRender(trackingId, RenderOutcome(status: .cancelled, at: nowMs, cancelReason: reason), nowMs: nowMs, now: now,
                         into: &effects)
            return
        }
        guard !session.awaitsAnswerResult else { return }
        effects.append(.log(.sessionEnded(trackingId: trackingId, reason: reason)))
        finish(trackingId, nowMs: nowMs, now: now, into: &effects)
    }

    // MARK: Render timer

    /// The shell armed the render timer for `target`: its generation, for `renderTimerFired`.
    mutating func renderTimerArmed(at target: ContinuousClock.Instant) -> Int { renderDeadlines.armed(at: target) }

    /// The render timer of `generation` fired: renders due time out.
    mutating func renderTimerFired(_ generation: Int, now: ContinuousClock.Instant, nowMs: Int64) -> [TrackingEffect] {
        guard renderDeadlines.isCurrent(generation) else { return [] }
        var effects: [TrackingEffect] = []
        let (due, next) = renderDeadlines.takeDue(now: now)
        if let next { effects.append(.armRenderTimer(at: next)) }
        for trackingId in due {
            settleRender(trackingId, RenderOutcome(status: .timeout, at: nowMs, failureReason: "timeout"), nowMs: nowMs, now: now,
                         into: &effects)
        }
        return effects
    }

    // MARK: The connection

    /// A connection is up (`true`) or gone: acks waiting go out in the order decided; those sent
    /// on a connection that went are sent again on the next.
    mutating func connectionChanged(up: Bool) -> [TrackingEffect] {
        connected = up
        guard up else {
            outbox.connectionLost()
            return []
        }
        return outbox.sendable.map(TrackingEffect.send)
    }

    /// The shell wrote `ack` at `mark` (nil: no proof will come for it), or could not (`sent`
    /// false: the connection is down after all).
    mutating func sendOutcome(_ ack: PendingAck, sent: Bool, at mark: SocketIOWriteMark?) -> [TrackingEffect] {
        guard sent else { return connectionChanged(up: false) }
        outbox.markSent(ack, at: mark)
        return []
    }

    /// The server acknowledged `ack`.
    mutating func acknowledged(_ ack: PendingAck, now: ContinuousClock.Instant) -> [TrackingEffect] {
        guard let entry = outbox.remove(ack) else { return [] }
        return delivered([entry], now: now)
    }

    /// The connection is proven to have carried everything up to `mark`: the acks sent before it
    /// are delivered, whether the server acknowledges them or not.
    mutating func carried(upTo mark: SocketIOWriteMark, now: ContinuousClock.Instant) -> [TrackingEffect] {
        delivered(outbox.removeCarried(upTo: mark), now: now)
    }

    private mutating func delivered(_ entries: [AckOutbox.Entry], now: ContinuousClock.Instant) -> [TrackingEffect] {
        guard !entries.isEmpty else { return [] }
        var effects: [TrackingEffect] = []
        deliveredCount += entries.count
        droppedSinceDelivery = 0
        for entry in entries where entry.stored { queue(.deleteAck(entry.ack), now: now, into: &effects) }
        if outbox.count == 0 { effects.append(.outboxEmpty) }
        return effects
    }

    // MARK: The store

    /// The store timer fired at `now` (or the daemon stops: `everything`, without waiting):
    /// what is to be stored goes in one batch: acks still undelivered past the delay, sessions
    /// still open past it, and the changes decided since the last batch.
    mutating func storeDue(now: ContinuousClock.Instant, nowMs: Int64, everything: Bool = false) -> [TrackingEffect] {
        storeTimerAt = nil
        var effects: [TrackingEffect] = []
        if !everything, let rest = storeRestsUntil, now < rest {
            armStoreTimer(into: &effects)
            return effects
        }
        var writes = pendingChanges
        pendingChanges = []
        pendingChangesDue = nil
        for ack in outbox.takeDueForStore(now: now, everything: everything) { writes.append(.ack(ack)) }
        var dueSessions: [TrackingSession] = []
        for (trackingId, session) in sessions where !session.renderedSent && !storedSessions.contains(trackingId)
            && (everything || (sessionsOpenedAt[trackingId].map { $0 + storeDelay <= now } ?? true)) {
            dueSessions.append(session)
        }
        // In the order of their ids, so that the same sessions are always written the same way.
        for session in dueSessions.sorted(by: { $0.trackingId < $1.trackingId }) {
            storedSessions.insert(session.trackingId)
            writes.append(.session(session.trackingId, state: session.stored, at: nowMs))
        }
        if !writes.isEmpty { effects.append(.store(writes)) }
        armStoreTimer(into: &effects)
        return effects
    }

    /// The store applied `writes` (`failures`: each one's error, nil when stored). An ack whose
    /// write waited (its session has a row) may go now, even when the store refused it: it goes
    /// from memory then. What the store refused is written again once the store rested
    /// (`storeRetryInterval`).
    mutating func stored(_ writes: [TrackingWrite], failures: [String?], now: ContinuousClock.Instant) -> [TrackingEffect] {
        var effects: [TrackingEffect] = []
        for (write, failure) in zip(writes, failures) {
            switch write {
            case .ack(let ack):
                if failure != nil { outbox.storeFailed(ack, retryAt: now) }
                if outbox.release(ack), connected { effects.append(.send(ack)) }
            case .session(let trackingId, let state, _):
                if failure != nil {
                    if state == nil { retry(write, now: now) } else { storedSessions.remove(trackingId) }
                }
            case .deleteAck:
                if failure != nil { retry(write, now: now) }
            }
            if let failure { effects.append(.log(note("The store refused a tracking write (kept, tried again): \(failure)"))) }
        }
        storeRestsUntil = failures.contains { $0 != nil } ? now + Self.storeRetryInterval : nil
        armStoreTimer(into: &effects)
        return effects
    }

    private mutating func retry(_ write: TrackingWrite, now: ContinuousClock.Instant) {
        pendingChanges.append(write)
        pendingChangesDue = min(pendingChangesDue ?? now, now)
    }

    /// How long the store rests after it refused a write (a full disk) before it is tried again.
    static let storeRetryInterval: Duration = .seconds(5)

    /// Changes decided now that go with the next batch, within the store's delay.
    private mutating func queue(_ write: TrackingWrite, now: ContinuousClock.Instant, into effects: inout [TrackingEffect]) {
        pendingChanges.append(write)
        if pendingChangesDue == nil { pendingChangesDue = now + storeDelay }
        armStoreTimer(into: &effects)
    }

    /// Asks for the store timer at the earliest moment something is due (not before the store
    /// rested after a refusal).
    ///
    /// An armed timer is never early enough to move: what is decided while it is armed is due
    /// `storeDelay` after now or later, or waits for the store's rest, so only a timer that is
    /// not armed is computed (a scan of every session and ack, which at hundreds of acks in
    /// flight was most of an overlay's cost).
    private mutating func armStoreTimer(into effects: inout [TrackingEffect]) {
        guard storeTimerAt == nil else { return }
        var due = outbox.nextStoreDue.earliest(pendingChangesDue)
        for (trackingId, session) in sessions where !session.renderedSent && !storedSessions.contains(trackingId) {
            guard let opened = sessionsOpenedAt[trackingId] else { continue }
            due = due.earliest(opened + storeDelay)
        }
        guard var due else { return }
        if let rest = storeRestsUntil { due = max(due, rest) }
        storeTimerAt = due
        effects.append(.armStoreTimer(at: due))
    }

    /// Open sessions whose `rendered` is not decided and that have no row yet.
    private var sessionsWithoutRow: Int {
        sessions.count { !$0.value.renderedSent && !storedSessions.contains($0.key) }
    }

    // MARK: Restart

    /// At daemon start: stored acks wait first, and sessions left open by the previous run
    /// (kill -9 included) are closed, with `rendered` `cancelled` (`daemon_restart`) when it was not sent.
    mutating func recovered(acks storedAcks: [PendingAck], sessions storedRows: [(trackingId: String, state: JSONValue)],
                            nowMs: Int64, now: ContinuousClock.Instant) -> [TrackingEffect] {
        var effects: [TrackingEffect] = []
        forgetDropped(outbox.prependStored(storedAcks), now: now, into: &effects)
        var closed = 0
        for (trackingId, state) in storedRows where sessions[trackingId] == nil {
            storedSessions.insert(trackingId)
            guard let session = TrackingSession(trackingId: trackingId, stored: state), !session.renderedSent else {
                storedSessions.remove(trackingId)
                queue(.session(trackingId, state: nil, at: nowMs), now: now, into: &effects)
                continue
            }
            let outcome = RenderOutcome(status: .cancelled, at: nowMs, cancelReason: "daemon_restart")
            sessionsOpenedAt[trackingId] = now
            sessions[trackingId] = session
            emit(.rendered, of: session, finishing: true, nowMs: nowMs, now: now, into: &effects) { $0.writeRendered(outcome, ackSent: $1, to: &$2, stamps: &$3) }
            closed += 1
        }
        if !storedAcks.isEmpty || !storedRows.isEmpty {
            effects.append(.log(.recovered(acks: storedAcks.count, sessions: storedRows.count, closed: closed)))
        }
        return effects
    }

    /// A problem the status reports as `lastError`; its warning is returned.
    mutating func note(_ problem: String, trackingId: String? = nil) -> TrackingLogLine {
        lastError = problem
        return .problem(problem, trackingId: trackingId)
    }

    /// The status board's `tracking` section. `unstoredWrites`: the shell's writes on their way
    /// to the store; the section's adds what a restart would need and the store does not hold yet
    /// (changes decided, undelivered acks and open sessions within the store's delay or refused):
    /// 0 says a kill -9 now loses nothing.
    func status(unstoredWrites: Int) -> JSONValue {
        [
            "openSessions": .number(Double(sessions.count)),
            "pendingAcks": .number(Double(outbox.count)),
            "delivered": .number(Double(deliveredCount)),
            "droppedAcks": .number(Double(droppedAcks)),
            "connected": .bool(connected),
            "unstoredWrites": .number(Double(unstoredWrites + pendingChanges.count + outbox.unstoredCount + sessionsWithoutRow)),
            "lastError": JSONValue(lastError),
        ]
    }

    // MARK: Stages

    /// Sends `rendered` once; any status but success ends the session.
    private mutating func settleRender(_ trackingId: String, _ outcome: RenderOutcome, loadCompleteAt: Int64? = nil, nowMs: Int64,
                                       now: ContinuousClock.Instant, into effects: inout [TrackingEffect]) {
        guard var session = sessions[trackingId], !session.renderedSent else { return }
        if let loadCompleteAt { session.loadCompleteAt = loadCompleteAt }
        renderDeadlines.remove(trackingId)
        effects.append(.log(.render(trackingId: trackingId, status: outcome.status, reason: outcome.cancelReason ?? outcome.failureReason)))
        emit(.rendered, of: session, finishing: outcome.status != .success, nowMs: nowMs, now: now, into: &effects) {
            $0.writeRendered(outcome, ackSent: $1, to: &$2, stamps: &$3)
        }
    }

    private mutating func answer(_ trackingId: String, _ outcome: AnswerOutcome, finishing: Bool, nowMs: Int64, now: ContinuousClock.Instant,
                                 into effects: inout [TrackingEffect]) {
        guard let session = sessions[trackingId] else { return }
        emit(outcome.stage, of: session, finishing: finishing, nowMs: nowMs, now: now, into: &effects) {
            $0.writeAnswer(outcome, ackSent: $1, to: &$2, stamps: &$3)
        }
    }

    /// Records `stage` of `session` unless it was sent, and queues its ack: sent at once when
    /// the session has no row (stored later if still undelivered), else written with the
    /// session's new state first (`stored` then releases it).
    private mutating func emit(_ stage: TrackingStage, of session: TrackingSession, finishing: Bool, nowMs ackSent: Int64,
                               now: ContinuousClock.Instant, into effects: inout [TrackingEffect],
                               fields stageFields: (TrackingSession, Int64, inout JSONWriter, inout AckStamps) -> Void) {
        guard !session.sent.contains(stage) else { return }
        var session = session
        session.sent.insert(stage)
        let base = context
        var stamps = AckStamps()
        let payload = PendingAck.payload(trackingId: session.trackingId, stage: stage, deviceId: deviceId, stamps: &stamps) { writer, stamps in
            base.writeMembers(to: &writer)
            stageFields(session, ackSent, &writer, &stamps)
        }
        let ack = PendingAck(trackingId: session.trackingId, stage: stage, payload: payload, stamps: stamps, created: ackSent)
        let hasRow = storedSessions.contains(session.trackingId)
        if finishing {
            finish(session.trackingId, nowMs: ackSent, now: now, into: &effects, rowKept: hasRow)
        } else {
            sessions[session.trackingId] = session
        }
        forgetDropped(outbox.append(ack, held: hasRow, storeBy: now + storeDelay), now: now, into: &effects)
        if hasRow {
            // The ack and the session's state in one transaction, before the ack goes out. A
            // session that ends, or whose `rendered` is out, needs no row any more.
            let keepsRow = !finishing && !session.renderedSent
            if !keepsRow { storedSessions.remove(session.trackingId) }
            // This write carries the row's newest state: one queued earlier (an attach) must
            // not follow it into the store, where it would bring an ended row back.
            dropQueuedRowWrites(of: session.trackingId)
            // (Not a `?:` with `nil`: JSONValue takes `nil` as its `null`, which would keep the row.)
            let state: JSONValue? = keepsRow ? .some(session.stored) : .none
            effects.append(.store([.ack(ack), .session(session.trackingId, state: state, at: ackSent)]))
        } else if connected {
            effects.append(.send(ack))
        }
        armStoreTimer(into: &effects)
    }

    private mutating func dropQueuedRowWrites(of trackingId: String) {
        pendingChanges.removeAll { if case .session(trackingId, _, _) = $0 { true } else { false } }
        if pendingChanges.isEmpty { pendingChangesDue = nil }
    }

    /// The session is over: forgotten (remembered as finished), its row deleted unless the
    /// caller writes the deletion itself (`rowKept`: with the session's last ack).
    private mutating func finish(_ trackingId: String, nowMs: Int64, now: ContinuousClock.Instant, into effects: inout [TrackingEffect],
                                 rowKept: Bool = false) {
        sessions[trackingId] = nil
        sessionsOpenedAt[trackingId] = nil
        renderDeadlines.remove(trackingId)
        if !rowKept, storedSessions.remove(trackingId) != nil {
            queue(.session(trackingId, state: nil, at: nowMs), now: now, into: &effects)
        }
        guard finishedIds.insert(trackingId).inserted else { return }
        guard finishedOrder.count == Self.finishedMemory else { return finishedOrder.append(trackingId) }
        // Full: the oldest makes room, without moving the rest.
        finishedIds.remove(finishedOrder[finishedOldest])
        finishedOrder[finishedOldest] = trackingId
        finishedOldest = (finishedOldest + 1) % Self.finishedMemory
    }

    /// Acks the outbox dropped because it was full: gone from the store too, counted, and
    /// warned about once per burst (the first drop after acks went out again).
    private mutating func forgetDropped(_ dropped: [AckOutbox.Entry], now: ContinuousClock.Instant, into effects: inout [TrackingEffect]) {
        forgetDropped(dropped.filter(\.stored).map(\.ack), all: dropped.map(\.ack), now: now, into: &effects)
    }

    private mutating func forgetDropped(_ dropped: [PendingAck], now: ContinuousClock.Instant, into effects: inout [TrackingEffect]) {
        forgetDropped(dropped, all: dropped, now: now, into: &effects)
    }

    private mutating func forgetDropped(_ stored: [PendingAck], all dropped: [PendingAck], now: ContinuousClock.Instant,
                                        into effects: inout [TrackingEffect]) {
        guard !dropped.isEmpty else { return }
        if droppedSinceDelivery == 0 {
            effects.append(.log(note("Emit-ack backlog full (\(AckOutbox.capacity) acks or \(AckOutbox.byteCapacity >> 10) KiB): dropping the oldest")))
        }
        droppedAcks += dropped.count
        droppedSinceDelivery += dropped.count
        for ack in dropped { effects.append(.log(.ackDropped(trackingId: ack.trackingId, stage: ack.stage))) }
        for ack in stored { queue(.deleteAck(ack), now: now, into: &effects) }
    }
}
