import IPCProtocol
import JSONValue

/// What one answer attempt came to (`answer.result`).
enum AnswerResult: Sendable, Equatable {
    /// The backend took the answer; its `data`.
    case success(JSONValue)
    /// `reason` as in `answer.result`; `detail` says more (a bet confirmation that timed out).
    case failure(String, detail: String? = nil)
}

/// What `GET /api/public/vip-status` said about the viewer.
struct VIPStatus: Sendable, Equatable {
    var vip: Bool
    var bet: Bool
}

/// What the answer core asks its shell (`OverlayManager`) to do, in order. REST calls are
/// effects: the shell makes them off the display path and feeds the reply back
/// (`vipStatusReplied`, `actionReplied`).
enum AnswerEffect: Sendable, Equatable {
    /// Publish `login.required` (reason `answer`).
    case loginRequired(overlayId: String)
    /// Publish `fanclub.required`.
    case fanclubRequired(overlayId: String, mediaId: String)
    /// Call `GET /api/public/vip-status` for `mediaId`, then `vipStatusReplied(attempt, …)`.
    case requestVIPStatus(attempt: Int, api: BackendAPI, mediaId: String)
    /// Arm a timer for this instant, then `timerFired` (the bet confirmation's deadline).
    case armTimer(at: ContinuousClock.Instant)
    /// Publish `answer.confirm`: the viewer is asked to confirm the bet (`answer.confirm`).
    case askConfirmation(AnswerConfirmEvent)
    /// Call `POST /api/actions` with `body`, then `actionReplied(attempt, …)`.
    case postAction(attempt: Int, api: BackendAPI, body: JSONValue)
    /// The screen's answered timelines gain this one, if the screen still serves `room` and `viewer`.
    case markAnswered(timelineId: String, room: RoomKey, viewer: String)
    /// Keep the answered timeline in the store; done before the result is published, so that
    /// an answer the players heard of survives a restart.
    case storeAnswered(viewer: String, mediaId: String, timelineId: String, overlay: IncomingOverlay)
    /// Record a tracking event (live overlays only).
    case track(TrackingEvent)
    /// Publish `answer.result` for the attempt (and log it).
    case result(overlayId: String, overlay: IncomingOverlay, AnswerResult)
    /// Publish `overlay.post` into the overlay.
    case post(overlayId: String, key: String, data: JSONValue)
    // What the shell logs.
    case cannotAnswer(overlayId: String, overlay: IncomingOverlay, message: String)
    case vipStatusUnavailable(overlayId: String, overlay: IncomingOverlay, error: BackendCallError)
    case confirmationTimedOut(overlay: IncomingOverlay, timeoutMs: Int)
    case submitting(overlayId: String, overlay: IncomingOverlay)
}

/// The answer flow (BACKEND.md, Answer flow) as a pure state machine: once per timeline, the
/// login, fanclub, VIP and bet rules, the bet confirmation and its deadline, `POST /api/actions`
/// and what each REST reply or failure leads to. One `answer.result` per attempt; a timeline
/// answered (or with an answer in flight) is `already_answered`.
///
/// An attempt in flight outlives its overlay and the room (the backend may already have taken
/// the answer, so its result is still published); only a bet confirmation ends when its overlay
/// leaves the screen (`overlayGone`: `bet_declined`), which is what leaving or changing rooms does.
/// Times: `nowMs` is wall-clock milliseconds since the epoch (tracking), `now` the monotonic clock
/// (confirmation deadlines); the shell passes both in.
struct AnswerCore: Sendable {
    private enum Stage: Equatable {
        /// Waiting for `GET /api/public/vip-status`.
        case vipStatus
        /// Waiting for the viewer's `answer.confirm`, at most until `deadline`.
        case confirming(deadline: ContinuousClock.Instant)
        /// Waiting for `POST /api/actions`.
        case posting
    }

    private struct Attempt {
        let overlayId: String
        let overlay: IncomingOverlay
        let trackingId: String?
        /// The room as it was when the viewer answered: the request and the store write use it.
        let context: RoomContext
        let userId: String
        let answer: JSONValue
        let api: BackendAPI
        var stage: Stage
        /// The overlay left the screen while its VIP status was asked for: no bet can be confirmed.
        var overlayLeft = false

        var isConfirming: Bool {
            if case .confirming = stage { return true }
            return false
        }
    }

    private var attempts: [Int: Attempt] = [:]
    private var nextAttempt = 0

    /// Whether an answer for `timelineId` is in flight.
    func inFlight(_ timelineId: String) -> Bool {
        attempts.values.contains { $0.overlay.timelineId == timelineId }
    }

    /// True while the viewer is asked to confirm a bet for `overlayId`.
    func awaitsConfirmation(_ overlayId: String) -> Bool {
        attempts.values.contains { $0.overlayId == overlayId && $0.isConfirming }
    }

    /// The template reported an answer for `overlayId` (`record`: that overlay on screen, nil when
    /// it left meanwhile) in `context` (nil: no room); `answered`: the timelines answered already.
    mutating func start(overlayId: String, answer: JSONValue, record: OnScreenOverlay?, context: RoomContext?,
                        answered: Set<String>, nowMs: Int64) -> [AnswerEffect] {
        guard let record, let context else { return [] }
        let overlay = record.overlay
        if answered.contains(overlay.timelineId) || inFlight(overlay.timelineId) {
            return [.result(overlayId: overlayId, overlay: overlay, .failure("already_answered"))]
        }
        guard context.session.isLoggedIn, let userId = context.session.userId else {
            return [.loginRequired(overlayId: overlayId), .result(overlayId: overlayId, overlay: overlay, .failure("login_required"))]
        }
        if overlay.requireFanclub && !context.fanclub {
            return [.fanclubRequired(overlayId: overlayId, mediaId: context.mediaId),
                    .result(overlayId: overlayId, overlay: overlay, .failure("fanclub_required"))]
        }
        let api: BackendAPI
        do {
            api = try BackendAPI(settings: context.settings, token: context.session.token)
        } catch {
            return [.cannotAnswer(overlayId: overlayId, overlay: overlay, message: error.message),
                    .result(overlayId: overlayId, overlay: overlay, .failure("network_error"))]
        }
        let id = nextAttempt
        nextAttempt &+= 1
        let needsStatus = overlay.requireVip || overlay.requireBet
        attempts[id] = Attempt(overlayId: overlayId, overlay: overlay, trackingId: record.trackingId, context: context, userId: userId,
                               answer: answer, api: api, stage: needsStatus ? .vipStatus : .posting)
        if needsStatus { return [.requestVIPStatus(attempt: id, api: api, mediaId: context.mediaId)] }
        return submit(id, nowMs: nowMs)
    }

    /// `GET /api/public/vip-status` replied (or failed) for `attempt`: the VIP and bet rules, then
    /// the bet confirmation (due `answerConfirmTimeoutMs` after `now`) or the answer itself.
    mutating func vipStatusReplied(_ id: Int, _ reply: Result<VIPStatus, BackendCallError>, nowMs: Int64,
                                   now: ContinuousClock.Instant) -> [AnswerEffect] {
        guard let attempt = attempts[id], attempt.stage == .vipStatus else { return [] }
        let status: VIPStatus
        switch reply {
        case .success(let replied):
            status = replied
        case .failure(let error):
            attempts[id] = nil
            return [.vipStatusUnavailable(overlayId: attempt.overlayId, overlay: attempt.overlay, error: error),
                    finish(attempt, .failure(error.answerFailure.reason))]
        }
        if attempt.overlay.requireVip && !status.vip { return end(id, .failure("vip_required")) }
        guard attempt.overlay.requireBet else { return submit(id, nowMs: nowMs) }
        guard status.bet else { return end(id, .failure("bet_not_allowed")) }
        // The viewer cannot be asked about an overlay no longer on screen.
        if attempt.overlayLeft { return end(id, .failure("bet_declined")) }
        let timeoutMs = attempt.context.settings.answerConfirmTimeoutMs
        let deadline = now + .milliseconds(timeoutMs)
        attempts[id]?.stage = .confirming(deadline: deadline)
        return [.armTimer(at: deadline),
                .askConfirmation(AnswerConfirmEvent(overlayId: attempt.overlayId, timelineId: attempt.overlay.timelineId,
                                                    amount: attempt.overlay.betAmount, vip: status.vip, bet: status.bet,
                                                    timeoutMs: timeoutMs))]
    }

    /// `answer.confirm`: the viewer accepted (the answer goes to the backend) or declined the bet.
    mutating func confirm(_ overlayId: String, accept: Bool, nowMs: Int64) throws(RPCError) -> [AnswerEffect] {
        guard let id = attempts.first(where: { $0.value.overlayId == overlayId && $0.value.isConfirming })?.key else {
            throw RPCError.invalidParams("no bet confirmation is pending for \(overlayId)")
        }
        return accept ? submit(id, nowMs: nowMs) : end(id, .failure("bet_declined"))
    }

    /// The timer armed for a deadline fired at `now`: confirmations due are declined (`timeout`).
    mutating func timerFired(now: ContinuousClock.Instant) -> [AnswerEffect] {
        var effects: [AnswerEffect] = []
        for id in attempts.keys.sorted() {
            guard let attempt = attempts[id], case .confirming(let deadline) = attempt.stage, deadline <= now else { continue }
            attempts[id] = nil
            effects.append(.confirmationTimedOut(overlay: attempt.overlay, timeoutMs: attempt.context.settings.answerConfirmTimeoutMs))
            effects.append(finish(attempt, .failure("bet_declined", detail: "timeout")))
        }
        return effects
    }

    /// `overlayId` left the screen (hidden, recalled, the room left or changed): a bet
    /// confirmation asked for it is declined, and one its VIP status (still awaited) would ask
    /// for will be. A REST call in flight goes on.
    mutating func overlayGone(_ overlayId: String) -> [AnswerEffect] {
        for (id, attempt) in attempts where attempt.overlayId == overlayId && attempt.stage == .vipStatus {
            attempts[id]?.overlayLeft = true
        }
        guard let id = attempts.first(where: { $0.value.overlayId == overlayId && $0.value.isConfirming })?.key else { return [] }
        return end(id, .failure("bet_declined"))
    }

    /// `POST /api/actions` replied for `attempt` at `nowMs`: the timeline is answered (screen and
    /// store) and, for VIP/bet and lucky overlays, the template hears of it; or the failure.
    mutating func actionReplied(_ id: Int, _ outcome: ActionOutcome, nowMs: Int64) -> [AnswerEffect] {
        guard let attempt = attempts[id], attempt.stage == .posting else { return [] }
        attempts[id] = nil
        let overlay = attempt.overlay
        switch outcome {
        case .failure(let reason, let step):
            var effects: [AnswerEffect] = []
            if let trackingId = attempt.trackingId {
                effects.append(.track(.answerFailed(trackingId: trackingId, reason: reason, step: step, at: nowMs)))
            }
            effects.append(finish(attempt, .failure(reason)))
            return effects
        case .success(let data):
            let context = attempt.context
            var effects: [AnswerEffect] = [
                .markAnswered(timelineId: overlay.timelineId, room: context.key, viewer: context.session.answeredBucket),
                .storeAnswered(viewer: context.session.answeredBucket, mediaId: context.mediaId, timelineId: overlay.timelineId,
                               overlay: overlay),
            ]
            if let trackingId = attempt.trackingId { effects.append(.track(.answerSucceeded(trackingId: trackingId, at: nowMs))) }
            effects.append(finish(attempt, .success(data)))
            if overlay.requireBet || overlay.requireVip {
                effects.append(.post(overlayId: attempt.overlayId, key: "UPDATE_CONFIRM",
                                     data: ["timelineId": .string(overlay.timelineId), "success": true]))
            }
            if overlay.kind == .lucky, let number = data["number"], !number.isNull {
                effects.append(.post(overlayId: attempt.overlayId, key: "UPDATE_NUMBER_LUCKY", data: ["number": number]))
            }
            return effects
        }
    }

    /// Sends the answer: tracking's `answer` stage, then `POST /api/actions`.
    private mutating func submit(_ id: Int, nowMs: Int64) -> [AnswerEffect] {
        guard let attempt = attempts[id] else { return [] }
        attempts[id]?.stage = .posting
        let context = attempt.context
        var effects: [AnswerEffect] = []
        if let trackingId = attempt.trackingId { effects.append(.track(.answerAttempted(trackingId: trackingId, at: nowMs))) }
        let body: JSONValue = [
            "mediaId": .string(context.mediaId), "timelineId": .string(attempt.overlay.timelineId),
            "os": JSONValue(context.settings.os), "socketId": context.mode == .live ? JSONValue(context.socketId) : .null,
            "userId": .string(attempt.userId), "mode": .string(context.mode.rawValue), "answer": attempt.answer,
        ]
        effects.append(.submitting(overlayId: attempt.overlayId, overlay: attempt.overlay))
        effects.append(.postAction(attempt: id, api: attempt.api, body: body))
        return effects
    }

    /// Ends the attempt with `result`.
    private mutating func end(_ id: Int, _ result: AnswerResult) -> [AnswerEffect] {
        guard let attempt = attempts.removeValue(forKey: id) else { return [] }
        return [finish(attempt, result)]
    }

    private func finish(_ attempt: Attempt, _ result: AnswerResult) -> AnswerEffect {
        .result(overlayId: attempt.overlayId, overlay: attempt.overlay, result)
    }
}
