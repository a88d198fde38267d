import IPCProtocol
import JSONValue
import Runtime

/// The answer flow's shell (BACKEND.md, Answer flow): `AnswerCore` decides, this performs. Answer
/// effects run in the manager's child tasks (the REST calls, the store write, the confirmation
/// deadline), never on the display path; each reply goes back to the core.
extension OverlayManager {
    /// What the template reported (`ScreenEffect.startAnswer`); run as a child task of `run()`,
    /// so that the bridge call that reported it is answered first.
    func startAnswer(overlayId: String, answer: JSONValue) async {
        let effects = answers.start(overlayId: overlayId, answer: answer, record: core.overlay(overlayId), context: context,
                                    answered: answered, nowMs: Timestamp.nowMs())
        await perform(effects)
    }

    /// `answer.confirm`: the viewer accepted or declined the bet deduction.
    func confirm(_ overlayId: String, accept: Bool) throws(RPCError) {
        _ = try core.indexOf(overlayId)
        let effects = try answers.confirm(overlayId, accept: accept, nowMs: Timestamp.nowMs())
        work.start { await self.perform(effects) }
    }

    /// A bet confirmation ends with its overlay (`ScreenEffect.overlayGone`).
    func answerOverlayGone(_ overlayId: String) {
        let effects = answers.overlayGone(overlayId)
        if !effects.isEmpty { work.start { await self.perform(effects) } }
    }

    private func vipStatusReplied(_ attempt: Int, _ reply: Result<VIPStatus, BackendCallError>) async {
        await perform(answers.vipStatusReplied(attempt, reply, nowMs: Timestamp.nowMs(), now: .now))
    }

    private func actionReplied(_ attempt: Int, _ outcome: ActionOutcome) async {
        await perform(answers.actionReplied(attempt, outcome, nowMs: Timestamp.nowMs()))
    }

    private func answerTimerFired() async {
        await perform(answers.timerFired(now: .now))
    }

    // MARK: Effects

    /// Performs what the answer core decided, in order.
    private func perform(_ effects: [AnswerEffect]) async {
        for effect in effects { await perform(effect) }
    }

    private func perform(_ effect: AnswerEffect) async {
        switch effect {
        case .loginRequired(let overlayId):
            await bus.publish(LoginRequiredEvent(overlayId: overlayId, reason: "answer"))
        case .fanclubRequired(let overlayId, let mediaId):
            await bus.publish(FanclubRequiredEvent(overlayId: overlayId, mediaId: mediaId))
        case .requestVIPStatus(let attempt, let api, let mediaId):
            work.start { [weak self] in
                let reply: Result<VIPStatus, BackendCallError>
                do throws(BackendCallError) {
                    reply = .success(try await api.vipStatus(mediaId: mediaId))
                } catch {
                    reply = .failure(error)
                }
                await self?.vipStatusReplied(attempt, reply)
            }
        case .armTimer(let deadline):
            work.start { [weak self] in
                await EventLoop.shared.sleep(until: deadline) { [weak self] in await self?.answerTimerFired() }
            }
        case .askConfirmation(let event):
            await bus.publish(event)
        case .postAction(let attempt, let api, let body):
            work.start { [weak self] in
                let outcome = await api.postAction(body)
                await self?.actionReplied(attempt, outcome)
            }
        case .markAnswered(let timelineId, let room, let viewer):
            core.markAnswered(timelineId, room: room, viewer: viewer)
        case .storeAnswered(let viewer, let mediaId, let timelineId, let overlay):
            do {
                try await store.markAnswered(viewer: viewer, media: mediaId, timeline: timelineId)
            } catch {
                log.error("Cannot keep the answered timeline in the store: \(error)", fields(overlay))
            }
        case .track(let event):
            tracker?.record(event)
        case .result(let overlayId, let overlay, .success(let data)):
            await bus.publish(AnswerResultEvent.success(overlayId: overlayId, timelineId: overlay.timelineId, data: data))
            log.info("Answer for \(overlayId) accepted (\(logDetail(overlay)))",
                     fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "success"]) { $1 },
                     id: .answerResult)
        case .result(let overlayId, let overlay, .failure(let reason, let detail)):
            await bus.publish(AnswerResultEvent.failure(overlayId: overlayId, timelineId: overlay.timelineId, reason: reason, detail: detail))
            let priority: LogPriority = Self.backendFailures.contains(reason) || reason.hasPrefix("api_") ? .warning : .info
            log.log(priority, "Answer for \(overlayId) failed (\(logDetail(overlay))): \(reason)\(detail.map { " (\($0))" } ?? "")",
                    fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "failure",
                                             "INTERACTIVE_ANSWER_REASON": reason]) { $1 }, id: .answerResult)
        case .post(let overlayId, let key, let data):
            await post(overlayId, key: key, data: data)
        case .cannotAnswer(let overlayId, let overlay, let message):
            log.error("Cannot answer for \(overlayId) (\(logDetail(overlay))): \(message)", fields(overlay))
        case .vipStatusUnavailable(let overlayId, let overlay, let error):
            log.warning("VIP status unavailable for \(overlayId) (\(logDetail(overlay))): \(error)", fields(overlay))
        case .confirmationTimedOut(let overlay, let timeoutMs):
            log.info("Bet confirmation not answered within \(timeoutMs) ms; declined", fields(overlay))
        case .submitting(let overlayId, let overlay):
            log.info("Submitting an answer for \(overlayId) (\(logDetail(overlay)))",
                     fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId]) { $1 }, id: .answerSubmitted)
        }
    }

    /// Reasons that mean the backend or the network failed, not a rule of the flow.
    private static let backendFailures: Set<String> = ["network_error", "unknown_response", "api_false", "api_unauthorized"]
}
