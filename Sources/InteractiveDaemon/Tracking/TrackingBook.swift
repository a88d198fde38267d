import JSONValue

/// A log line the tracking book asks for (built by the shell only when its level is on).
enum TrackingLogLine: Sendable, Equatable {
    /// A `received` for a session already open or recently finished (debug).
    case alreadyKnown(trackingId: String)
    /// How `rendered` ended (info).
    case render(trackingId: String, status: RenderStatus, reason: String?)
    /// An ack was queued (debug).
    case ackQueued(trackingId: String, stage: TrackingStage)
    /// A session ended without a stage (debug).
    case sessionEnded(trackingId: String, reason: String)
    /// An ack dropped because the backlog is full (debug).
    case ackDropped(trackingId: String, stage: TrackingStage)
    /// An ack left for good (debug).
    case delivered(trackingId: String, stage: TrackingStage, confirmed: Bool)
    /// What a restart recovered (info).
    case recovered(acks: Int, sessions: Int, closed: Int)
    /// A problem, also kept as the status's `lastError` (warning).
    case problem(String, trackingId: String?)
}

/// What the tracking book asks its shell (`TrackingService`) to do, in order.
enum TrackingEffect: Sendable, Equatable {
    /// Queue a write of the tracking tables; the store writer performs it off the display path.
    case store(TrackingWrite)
    /// Arm the one render timer for this instant (`renderTimerArmed`, then `renderTimerFired`).
    case armRenderTimer(at: ContinuousClock.Instant)
    case log(TrackingLogLine)
    /// The status board's `tracking` section changed.
    case status
    /// The outbox emptied: callers of `drain` may return.
    case outboxEmpty
}

/// emit-ack tracking's decisions as a pure state machine (BACKEND.md "emit-ack tracking"): one
/// session per `_trackingId`, each stage at most once, the render timeout, which acks wait (the
/// outbox, bounded) and what is stored about them. Times come in: `nowMs` (the wall clock acks
/// carry) and `now` (the monotonic clock of the render timeout). Delivery itself (lanes over the
/// connection) and the store writer are the shell's; their results come back here.
struct TrackingBook: Sendable {
    /// Recently finished sessions remembered, so that a repeated `received` does not open them again.
    static let finishedMemory = 1024

    let deviceId: String
    var context: ClientContextBase
    let renderTimeout: Duration
    private(set) var sessions: [String: TrackingSession] = [:]
    /// When each shown overlay's render times out, by tracking id.
    private var renderDeadlines = DeadlineSchedule<String>()
    private var finishedIds: Set<String> = []
    private var finishedOrder: [String] = []
    /// The acks waiting for the server; the shell's lanes take them (`next`, `claimLanes`, …).
    var outbox = AckOutbox()
    private(set) var deliveredCount = 0
    /// Acks dropped because the backlog was full, in all and since an ack last went out.
    private(set) var droppedAcks = 0
    private var droppedSinceDelivery = 0
    private(set) var lastError: String?

    init(deviceId: String, context: ClientContextBase, renderTimeout: Duration) {
        self.deviceId = deviceId
        self.context = context
        self.renderTimeout = renderTimeout
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
            emit(.received, of: session, finishing: false, nowMs: nowMs, into: &effects) { $0.receivedFields(ackSent: $1) }
        case .keptOffScreen(let trackingId, let reason):
            settleRender(trackingId, RenderOutcome(status: .cancelled, at: nowMs, cancelReason: reason), nowMs: nowMs, into: &effects)
        case .shown(let trackingId):
            guard let session = sessions[trackingId], !session.renderedSent, !renderDeadlines.contains(trackingId) else { break }
            if let target = renderDeadlines.set(trackingId, at: now + renderTimeout) { effects.append(.armRenderTimer(at: target)) }
        case .attached(let trackingId, let at):
            guard var session = sessions[trackingId], !session.renderedSent, session.attachedAt == nil else { break }
            session.attachedAt = at
            sessions[trackingId] = session
            persist(trackingId, nowMs: nowMs, into: &effects)
        case .loaded(let trackingId, let at):
            settleRender(trackingId, RenderOutcome(status: .success, at: at), loadCompleteAt: at, nowMs: nowMs, into: &effects)
        case .failed(let trackingId, let reason, let at):
            let outcome = RenderOutcome(status: .failed, at: at, failureReason: "load_error", failureStep: "render", detail: reason)
            settleRender(trackingId, outcome, nowMs: nowMs, into: &effects)
        case .cancelled(let trackingId, let reason):
            cancelled(trackingId, reason: reason, nowMs: nowMs, into: &effects)
        case .answerAttempted(let trackingId, let at):
            answer(trackingId, AnswerOutcome(stage: .answer, at: at), finishing: false, nowMs: nowMs, into: &effects)
        case .answerSucceeded(let trackingId, let at):
            answer(trackingId, AnswerOutcome(stage: .answerSucceeded, at: at), finishing: true, nowMs: nowMs, into: &effects)
        case .answerFailed(let trackingId, let reason, let step, let at):
            let outcome = AnswerOutcome(stage: .answerFailed, at: at, failureReason: reason, failureStep: step)
            answer(trackingId, outcome, finishing: true, nowMs: nowMs, into: &effects)
        }
        return effects
    }

    /// The overlay went away. Before `rendered`: `rendered` `cancelled`. After it: the session
    /// ends without a stage, unless an answer was sent and its result is still to come.
    private mutating func cancelled(_ trackingId: String, reason: String, nowMs: Int64, into effects: inout [TrackingEffect]) {
        guard let session = sessions[trackingId] else { return }
        guard session.renderedSent else {
            settleRender(trackingId, RenderOutcome(status: .cancelled, at: nowMs, cancelReason: reason), nowMs: nowMs, into: &effects)
            return
        }
        guard !session.awaitsAnswerResult else { return }
        effects.append(.log(.sessionEnded(trackingId: trackingId, reason: reason)))
        finish(trackingId)
        persist(trackingId, nowMs: nowMs, into: &effects)
        effects.append(.status)
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
            settleRender(trackingId, RenderOutcome(status: .timeout, at: nowMs, failureReason: "timeout"), nowMs: nowMs, into: &effects)
        }
        return effects
    }

    // MARK: Restart and delivery

    /// At daemon start: stored acks wait first, and sessions left open by the previous run
    /// (kill -9 included) are closed, with `rendered` `cancelled` (`daemon_restart`) when it was not sent.
    mutating func recovered(acks storedAcks: [PendingAck], sessions storedSessions: [(trackingId: String, state: JSONValue)],
                            nowMs: Int64) -> [TrackingEffect] {
        var effects: [TrackingEffect] = []
        forgetDropped(outbox.prependStored(storedAcks), into: &effects)
        var closed = 0
        for (trackingId, state) in storedSessions where sessions[trackingId] == nil {
            guard let session = TrackingSession(trackingId: trackingId, stored: state), !session.renderedSent else {
                persist(trackingId, nowMs: nowMs, into: &effects)
                continue
            }
            let outcome = RenderOutcome(status: .cancelled, at: nowMs, cancelReason: "daemon_restart")
            emit(.rendered, of: session, finishing: true, nowMs: nowMs, into: &effects) { $0.renderedFields(outcome, ackSent: $1) }
            closed += 1
        }
        if !storedAcks.isEmpty || !storedSessions.isEmpty {
            effects.append(.log(.recovered(acks: storedAcks.count, sessions: storedSessions.count, closed: closed)))
        }
        effects.append(.status)
        return effects
    }

    /// The ack left for good: acknowledged, or unacknowledged for the ack timeout on a live connection.
    mutating func delivered(_ ack: PendingAck, confirmed: Bool) -> [TrackingEffect] {
        guard outbox.remove(ack) else { return [] }
        deliveredCount += 1
        droppedSinceDelivery = 0
        var effects: [TrackingEffect] = []
        if outbox.count == 0 { effects.append(.outboxEmpty) }
        effects.append(.log(.delivered(trackingId: ack.trackingId, stage: ack.stage, confirmed: confirmed)))
        effects.append(.store(.deleteAck(ack)))
        effects.append(.status)
        return effects
    }

    /// A problem the status reports as `lastError`; its warning is returned.
    mutating func note(_ problem: String, trackingId: String? = nil) -> TrackingLogLine {
        lastError = problem
        return .problem(problem, trackingId: trackingId)
    }

    /// The status board's `tracking` section.
    func status(connected: Bool, unstoredWrites: Int) -> JSONValue {
        [
            "openSessions": .number(Double(sessions.count)),
            "pendingAcks": .number(Double(outbox.count)),
            "delivered": .number(Double(deliveredCount)),
            "droppedAcks": .number(Double(droppedAcks)),
            "connected": .bool(connected),
            "unstoredWrites": .number(Double(unstoredWrites)),
            "lastError": JSONValue(lastError),
        ]
    }

    // MARK: Stages

    /// Sends `rendered` once; any status but success ends the session.
    private mutating func settleRender(_ trackingId: String, _ outcome: RenderOutcome, loadCompleteAt: Int64? = nil, nowMs: Int64,
                                       into effects: inout [TrackingEffect]) {
        guard var session = sessions[trackingId], !session.renderedSent else { return }
        if let loadCompleteAt { session.loadCompleteAt = loadCompleteAt }
        renderDeadlines.remove(trackingId)
        effects.append(.log(.render(trackingId: trackingId, status: outcome.status, reason: outcome.cancelReason ?? outcome.failureReason)))
        emit(.rendered, of: session, finishing: outcome.status != .success, nowMs: nowMs, into: &effects) {
            $0.renderedFields(outcome, ackSent: $1)
        }
    }

    private mutating func answer(_ trackingId: String, _ outcome: AnswerOutcome, finishing: Bool, nowMs: Int64,
                                 into effects: inout [TrackingEffect]) {
        guard let session = sessions[trackingId] else { return }
        emit(outcome.stage, of: session, finishing: finishing, nowMs: nowMs, into: &effects) { $0.answerFields(outcome, ackSent: $1) }
    }

    /// Records `stage` of `session` unless it was sent, and queues its ack; the ack and the
    /// session's state are stored together (one write), and only then may the ack be sent.
    private mutating func emit(_ stage: TrackingStage, of session: TrackingSession, finishing: Bool, nowMs ackSent: Int64,
                               into effects: inout [TrackingEffect],
                               fields stageFields: (TrackingSession, Int64) -> [String: JSONValue]) {
        guard !session.sent.contains(stage) else { return }
        var session = session
        session.sent.insert(stage)
        let payload = PendingAck.payload(trackingId: session.trackingId, stage: stage, deviceId: deviceId,
                                         clientContext: context.clientContext(stageFields(session, ackSent)))
        let ack = PendingAck(trackingId: session.trackingId, stage: stage, payload: payload, created: ackSent)
        if finishing {
            finish(session.trackingId)
        } else {
            sessions[session.trackingId] = session
        }
        forgetDropped(outbox.append(ack), into: &effects)
        effects.append(.log(.ackQueued(trackingId: session.trackingId, stage: stage)))
        // `.none`, not `nil`: JSONValue is ExpressibleByNilLiteral, so a bare `nil` would become `.null`.
        let state: JSONValue? = finishing ? .none : .some(session.stored)
        effects.append(.store(.ack(ack, sessionState: state, at: ackSent)))
        effects.append(.status)
    }

    private mutating func finish(_ trackingId: String) {
        sessions[trackingId] = nil
        renderDeadlines.remove(trackingId)
        guard finishedIds.insert(trackingId).inserted else { return }
        finishedOrder.append(trackingId)
        if finishedOrder.count > Self.finishedMemory { finishedIds.remove(finishedOrder.removeFirst()) }
    }

    /// Writes the session's state, or deletes its row when it is no longer open.
    private func persist(_ trackingId: String, nowMs: Int64, into effects: inout [TrackingEffect]) {
        effects.append(.store(.session(trackingId, state: sessions[trackingId]?.stored, at: nowMs)))
    }

    /// Acks the outbox dropped because it was full: gone from the store too, counted, and
    /// warned about once per burst (the first drop after acks went out again).
    private mutating func forgetDropped(_ dropped: [PendingAck], into effects: inout [TrackingEffect]) {
        guard !dropped.isEmpty else { return }
        if droppedSinceDelivery == 0 {
            effects.append(.log(note("Emit-ack backlog full (\(AckOutbox.capacity) acks or \(AckOutbox.byteCapacity >> 10) KiB): dropping the oldest")))
        }
        droppedAcks += dropped.count
        droppedSinceDelivery += dropped.count
        for ack in dropped {
            effects.append(.log(.ackDropped(trackingId: ack.trackingId, stage: ack.stage)))
            effects.append(.store(.deleteAck(ack)))
        }
    }
}
