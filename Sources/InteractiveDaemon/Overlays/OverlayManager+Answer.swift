import IPCProtocol
import JSONValue
import Runtime

/// The answer flow's shell (BACKEND.md, Answer flow): `AnswerCore` decides, this performs. Answer
/// effects run in the manager's child tasks (the REST calls, the store write, the confirmation
/// deadline), never on the display path; each reply goes back to the core.
extension OverlayManager {
    /// What the template reported (`ScreenEffect.startAnswer`), once the bridge call that
    /// reported it was answered.
    func startAnswer(overlayId: String, answer: JSONValue) {
        let effects = answers.start(overlayId: overlayId, answer: answer, record: core.overlay(overlayId), context: context,
                                    answered: answered, nowMs: Timestamp.nowMs())
        perform(effects)
    }

    /// `answer.confirm`: the viewer accepted or declined the bet deduction. What follows is
    /// performed after the method's reply.
    func confirm(_ overlayId: String, accept: Bool) throws(RPCError) {
        _ = try core.indexOf(overlayId)
        let effects = try answers.confirm(overlayId, accept: accept, nowMs: Timestamp.nowMs())
        EventLoop.shared.execute { [weak self] in self?.perform(effects) }
    }

    /// A bet confirmation ends with its overlay (`ScreenEffect.overlayGone`).
    func answerOverlayGone(_ overlayId: String) {
        let effects = answers.overlayGone(overlayId)
        if !effects.isEmpty { EventLoop.shared.execute { [weak self] in self?.perform(effects) } }
    }

    private func vipStatusReplied(_ attempt: Int, _ reply: Result<VIPStatus, BackendCallError>) {
        perform(answers.vipStatusReplied(attempt, reply, nowMs: Timestamp.nowMs(), now: .now))
    }

    private func actionReplied(_ attempt: Int, _ outcome: ActionOutcome) {
        perform(answers.actionReplied(attempt, outcome, nowMs: Timestamp.nowMs()))
    }

    private func answerTimerFired() {
        perform(answers.timerFired(now: .now))
    }

    // MARK: Effects

    /// Performs what the answer core decided, in order.
    private func perform(_ effects: [AnswerEffect]) {
        for effect in effects { perform(effect) }
    }

    private func perform(_ effect: AnswerEffect) {
        switch effect {
        case .loginRequired(let overlayId):
            bus.publish(LoginRequiredEvent(overlayId: overlayId, reason: "answer"))
        case .fanclubRequired(let overlayId, let mediaId):
            bus.publish(FanclubRequiredEvent(overlayId: overlayId, mediaId: mediaId))
        case .requestVIPStatus(let attempt, let api, let mediaId):
            work.start { [weak self] in
                let reply: Result<VIPStatus, BackendCallError>
                do throws(BackendCallError) {
                    reply = .success(try await api.vipStatus(mediaId: mediaId))
                } catch {
                    reply = .failure(error)
                    if case .refused = error { self?.reportSessionRefused(api.requester.token, source: "VIP status") }
                }
                self?.vipStatusReplied(attempt, reply)
            }
        case .armTimer(let deadline):
            EventLoop.shared.schedule(at: deadline) { [weak self] in self?.answerTimerFired() }
        case .askConfirmation(let event):
            bus.publish(event)
        case .postAction(let attempt, let api, let body):
            work.start { [weak self] in
                let outcome = await api.postAction(body)
                if outcome == .failure(reason: "api_unauthorized", step: "api") {
                    self?.reportSessionRefused(api.requester.token, source: "answer")
                }
                self?.actionReplied(attempt, outcome)
            }
        case .markAnswered(let timelineId, let room, let viewer):
            core.markAnswered(timelineId, room: room, viewer: viewer)
        case .storeAnswered(let viewer, let mediaId, let timelineId, let overlay):
            let (store, log, fields) = (self.store, self.log, fields(overlay))
            work.start {
                do {
                    try await store.markAnswered(viewer: viewer, media: mediaId, timeline: timelineId)
                } catch {
                    log.error("Cannot keep the answered timeline in the store: \(error)", fields)
                }
            }
        case .track(let event):
            tracker?.record(event)
        case .result(let overlayId, let overlay, .success(let data)):
            bus.publish(AnswerResultEvent.success(overlayId: overlayId, timelineId: overlay.timelineId, data: data))
            log.info("Answer for \(overlayId) accepted (\(logDetail(overlay)))",
                     fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "success"]),
                     id: .answerResult)
        case .result(let overlayId, let overlay, .failure(let reason, let detail)):
            bus.publish(AnswerResultEvent.failure(overlayId: overlayId, timelineId: overlay.timelineId, reason: reason, detail: detail))
            let priority: LogPriority = Self.backendFailures.contains(reason) || reason.hasPrefix("api_") ? .warning : .info
            log.log(priority, "Answer for \(overlayId) failed (\(logDetail(overlay))): \(reason)\(detail.map { " (\($0))" } ?? "")",
                    fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "failure",
                                             "INTERACTIVE_ANSWER_REASON": reason]), id: .answerResult)
        case .post(let overlayId, let key, let data):
            post(overlayId, key: key, data: data)
        case .cannotAnswer(let overlayId, let overlay, let message):
            log.error("Cannot answer for \(overlayId) (\(logDetail(overlay))): \(message)", fields(overlay))
        case .vipStatusUnavailable(let overlayId, let overlay, let error):
            log.warning("VIP status unavailable for \(overlayId) (\(logDetail(overlay))): \(error)", fields(overlay))
        case .confirmationTimedOut(let overlay, let timeoutMs):
            log.info("Bet confirmation not answered within \(timeoutMs) ms; declined", fields(overlay))
        case .submitting(let overlayId, let overlay):
            log.info("Submitting an answer for \(overlayId) (\(logDetail(overlay)))",
                     fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId]), id: .answerSubmitted)
        }
    }

    /// Reasons that mean the backend or the network failed, not a rule of the flow.
    private static let backendFailures: Set<String> = ["network_error", "unknown_response", "api_false", "api_unauthorized"]
}
