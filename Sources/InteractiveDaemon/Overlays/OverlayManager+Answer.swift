import IPCProtocol
import JSONValue
import Runtime

/// The answer flow (BACKEND.md, Answer flow): login, fanclub, VIP, bet confirmation, then
/// `POST /api/actions`; one `answer.result` per attempt, one successful answer per timeline.
extension OverlayManager {
    /// `answer.confirm`: the viewer accepted or declined the bet deduction.
    func confirm(_ overlayId: String, accept: Bool) throws(RPCError) {
        _ = try core.indexOf(overlayId)
        switch confirmations.reply(overlayId, accept: accept) {
        case .notPending: throw RPCError.invalidParams("no bet confirmation is pending for \(overlayId)")
        case .resume(let waiter): waiter.resume(returning: accept ? .accepted : .declined)
        case .kept: break
        }
    }

    /// Bet confirmations not answered in time are declined.
    func expireConfirmations() {
        for (_, waiter) in confirmations.expire(now: Timestamp.monotonicMs()) { waiter.resume(returning: .timedOut) }
    }

    /// What one attempt came to.
    private enum Outcome {
        case success(JSONValue)
        /// `reason` as in `answer.result`; `detail` says more (a bet confirmation that timed out).
        case failure(String, detail: String? = nil)
    }

    /// The flow for what the template reported (`ScreenEffect.startAnswer`); the outcome arrives
    /// as events. It runs as a task of its own (a child of `run()`), so that the player can answer
    /// `answer.confirm` meanwhile, on any connection.
    func runAnswer(overlayId: String, answer: JSONValue) async {
        guard let record = screen.first(where: { $0.overlayId == overlayId }), let context else { return }
        let overlay = record.overlay
        let timelineId = overlay.timelineId
        if answered.contains(timelineId) || answering.contains(timelineId) {
            return await publishResult(overlayId, overlay, .failure("already_answered"))
        }
        guard context.session.isLoggedIn, let userId = context.session.userId else {
            await bus.publish(LoginRequiredEvent(overlayId: overlayId, reason: "answer"))
            return await publishResult(overlayId, overlay, .failure("login_required"))
        }
        if overlay.requireFanclub && !context.fanclub {
            await bus.publish(FanclubRequiredEvent(overlayId: overlayId, mediaId: context.mediaId))
            return await publishResult(overlayId, overlay, .failure("fanclub_required"))
        }
        answering.insert(timelineId)
        let outcome = await submit(record, context: context, userId: userId, answer: answer)
        // Settled before anyone hears of it: a retry right after the result is a new attempt.
        answering.remove(timelineId)
        await publishResult(overlayId, overlay, outcome)
        guard case .success(let data) = outcome else { return }
        if overlay.requireBet || overlay.requireVip {
            await post(overlayId, key: "UPDATE_CONFIRM", data: ["timelineId": .string(timelineId), "success": true])
        }
        if overlay.kind == .lucky, let number = data["number"], !number.isNull {
            await post(overlayId, key: "UPDATE_NUMBER_LUCKY", data: ["number": number])
        }
    }

    /// VIP and bet checks, the bet confirmation, then `POST /api/actions`.
    private func submit(_ record: OnScreenOverlay, context: RoomContext, userId: String, answer: JSONValue) async -> Outcome {
        let overlay = record.overlay
        let timelineId = overlay.timelineId
        let api: BackendAPI
        do {
            api = try BackendAPI(settings: context.settings, token: context.session.token)
        } catch {
            log.error("Cannot answer for \(record.overlayId) (\(logDetail(overlay))): \(error.message)", fields(overlay))
            return .failure("network_error")
        }

        if overlay.requireVip || overlay.requireBet {
            let status: (vip: Bool, bet: Bool)
            do {
                status = try await api.vipStatus(mediaId: context.mediaId)
            } catch {
                log.warning("VIP status unavailable for \(record.overlayId) (\(logDetail(overlay))): \(error)", fields(overlay))
                return .failure(error.answerFailure.reason)
            }
            if overlay.requireVip && !status.vip { return .failure("vip_required") }
            if overlay.requireBet {
                guard status.bet else { return .failure("bet_not_allowed") }
                switch await confirmBet(record, amount: overlay.betAmount, vip: status.vip, bet: status.bet,
                                        timeoutMs: context.settings.answerConfirmTimeoutMs) {
                case .accepted: break
                case .timedOut:
                    log.info("Bet confirmation not answered within \(context.settings.answerConfirmTimeoutMs) ms; declined",
                             fields(overlay))
                    return .failure("bet_declined", detail: "timeout")
                case .declined, .overlayGone:
                    return .failure("bet_declined")
                }
            }
        }

        let trackingId = record.trackingId
        if let trackingId { tracker?.record(.answerAttempted(trackingId: trackingId, at: Timestamp.nowMs())) }
        let body: JSONValue = [
            "mediaId": .string(context.mediaId), "timelineId": .string(timelineId), "os": JSONValue(context.settings.os),
            "socketId": context.mode == .live ? JSONValue(context.socketId) : .null, "userId": .string(userId),
            "mode": .string(context.mode.rawValue), "answer": answer,
        ]
        log.info("Submitting an answer for \(record.overlayId) (\(logDetail(overlay)))",
                 fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": record.overlayId]) { $1 }, id: .answerSubmitted)
        switch await api.postAction(body) {
        case .success(let data):
            core.markAnswered(timelineId)
            do {
                try await store.markAnswered(viewer: context.session.answeredBucket, media: context.mediaId, timeline: timelineId)
            } catch {
                log.error("Cannot keep the answered timeline in the store: \(error)", fields(overlay))
            }
            if let trackingId { tracker?.record(.answerSucceeded(trackingId: trackingId, at: Timestamp.nowMs())) }
            return .success(data)
        case .failure(let reason, let step):
            if let trackingId { tracker?.record(.answerFailed(trackingId: trackingId, reason: reason, step: step, at: Timestamp.nowMs())) }
            return .failure(reason)
        }
    }

    /// Asks the viewer to confirm the bet (`answer.confirm`) and waits, at most `timeoutMs`. The
    /// confirmation is registered before the players hear of it, so a reply that comes back at
    /// once is taken.
    private func confirmBet(_ record: OnScreenOverlay, amount: Double, vip: Bool, bet: Bool, timeoutMs: Int) async -> BetDecision {
        let overlayId = record.overlayId
        let replaced = confirmations.ask(overlayId, deadline: Timestamp.monotonicMs() + Int64(timeoutMs))
        replaced?.resume(returning: .declined)
        // One sleeping task per confirmation asked (rare: a bet overlay answered), so that nobody
        // waits forever for a viewer who walked away.
        work.start { [weak self] in
            guard (try? await EventLoop.shared.sleep(for: .milliseconds(timeoutMs))) != nil else { return }
            await self?.expireConfirmations()
        }
        await bus.publish(AnswerConfirmEvent(overlayId: overlayId, timelineId: record.timelineId, kind: "bet", amount: amount,
                                             vip: vip, bet: bet, timeoutMs: timeoutMs))
        return await withCheckedContinuation { waiter in
            if let known = confirmations.wait(overlayId, waiter) { waiter.resume(returning: known) }
        }
    }

    private func publishResult(_ overlayId: String, _ overlay: IncomingOverlay, _ outcome: Outcome) async {
        switch outcome {
        case .success(let data): await publishResult(overlayId, overlay, data: data)
        case .failure(let reason, let detail): await publishResult(overlayId, overlay, failure: reason, detail: detail)
        }
    }

    /// Reasons that mean the backend or the network failed, not a rule of the flow.
    private static let backendFailures: Set<String> = ["network_error", "unknown_response", "api_false", "api_unauthorized"]

    private func publishResult(_ overlayId: String, _ overlay: IncomingOverlay, failure reason: String, detail: String?) async {
        await bus.publish(AnswerResultEvent.failure(overlayId: overlayId, timelineId: overlay.timelineId, reason: reason, detail: detail))
        let priority: LogPriority = Self.backendFailures.contains(reason) || reason.hasPrefix("api_") ? .warning : .info
        log.log(priority, "Answer for \(overlayId) failed (\(logDetail(overlay))): \(reason)\(detail.map { " (\($0))" } ?? "")",
                fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "failure",
                                         "INTERACTIVE_ANSWER_REASON": reason]) { $1 }, id: .answerResult)
    }

    private func publishResult(_ overlayId: String, _ overlay: IncomingOverlay, data: JSONValue) async {
        await bus.publish(AnswerResultEvent.success(overlayId: overlayId, timelineId: overlay.timelineId, data: data))
        log.info("Answer for \(overlayId) accepted (\(logDetail(overlay)))",
                 fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "success"]) { $1 },
                 id: .answerResult)
    }
}
