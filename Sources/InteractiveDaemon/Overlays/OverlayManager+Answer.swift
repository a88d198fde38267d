import IPCProtocol
import JSONValue

/// The answer flow (BACKEND.md, Answer flow): login, fanclub, VIP, bet confirmation, then
/// `POST /api/actions`; one `answer.result` per attempt, one successful answer per timeline.
extension OverlayManager {
    /// Starts the flow for what the template reported; the outcome arrives as events. It runs on
    /// its own so that the player can answer `answer.confirm` meanwhile, on any connection.
    func startAnswer(overlayId: String, answer: JSONValue) {
        Task { await self.runAnswer(overlayId: overlayId, answer: answer) }
    }

    /// `answer.confirm`: the viewer accepted or declined the bet deduction.
    func confirm(_ overlayId: String, accept: Bool) throws(RPCError) {
        _ = try indexOf(overlayId)
        guard let waiting = confirmations.removeValue(forKey: overlayId) else {
            throw RPCError.invalidParams("no bet confirmation is pending for \(overlayId)")
        }
        waiting.resume(returning: accept)
    }

    private func runAnswer(overlayId: String, answer: JSONValue) async {
        guard let record = screen.first(where: { $0.overlayId == overlayId }), let context else { return }
        let overlay = record.overlay
        let timelineId = overlay.timelineId
        if answered.contains(timelineId) || answering.contains(timelineId) {
            return await publishResult(overlayId, overlay, failure: "already_answered")
        }
        guard context.session.isLoggedIn, let userId = context.session.userId else {
            await bus.publish(EventType.loginRequired, ["overlayId": .string(overlayId), "reason": "answer"])
            return await publishResult(overlayId, overlay, failure: "login_required")
        }
        if overlay.requireFanclub && !context.fanclub {
            await bus.publish(EventType.fanclubRequired, ["overlayId": .string(overlayId), "mediaId": .string(context.mediaId)])
            return await publishResult(overlayId, overlay, failure: "fanclub_required")
        }
        answering.insert(timelineId)
        defer { answering.remove(timelineId) }
        let api: BackendAPI
        do {
            api = try BackendAPI(settings: context.settings, token: context.session.token)
        } catch {
            log.error("Cannot answer for \(overlayId) (\(logDetail(overlay))): \(error.message)", fields(overlay))
            return await publishResult(overlayId, overlay, failure: "network_error")
        }

        if overlay.requireVip || overlay.requireBet {
            let status: (vip: Bool, bet: Bool)
            do {
                status = try await api.vipStatus(mediaId: context.mediaId)
            } catch {
                log.warning("VIP status unavailable for \(overlayId) (\(logDetail(overlay))): \(error)", fields(overlay))
                return await publishResult(overlayId, overlay, failure: error.answerFailure.reason)
            }
            if overlay.requireVip && !status.vip { return await publishResult(overlayId, overlay, failure: "vip_required") }
            if overlay.requireBet {
                guard status.bet else { return await publishResult(overlayId, overlay, failure: "bet_not_allowed") }
                await bus.publish(EventType.answerConfirm, [
                    "overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": "bet",
                    "amount": .number(overlay.betAmount), "vip": .bool(status.vip), "bet": .bool(status.bet),
                ])
                let accepted = await withCheckedContinuation { confirmations[overlayId] = $0 }
                guard accepted else { return await publishResult(overlayId, overlay, failure: "bet_declined") }
            }
        }

        let trackingId = record.trackingId
        if let trackingId { tracker?.record(.answerAttempted(trackingId: trackingId, at: Timestamp.nowMs())) }
        let body: JSONValue = [
            "mediaId": .string(context.mediaId), "timelineId": .string(timelineId), "os": JSONValue(context.settings.os),
            "socketId": context.mode == .live ? JSONValue(context.socketId) : .null, "userId": .string(userId),
            "mode": .string(context.mode.rawValue), "answer": answer,
        ]
        log.info("Submitting an answer for \(overlayId) (\(logDetail(overlay)))",
                 fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId]) { $1 }, id: .answerSubmitted)
        switch await api.postAction(body) {
        case .success(let data):
            answered.insert(timelineId)
            do {
                try await store.markAnswered(viewer: context.session.answeredBucket, media: context.mediaId, timeline: timelineId)
            } catch {
                log.error("Cannot keep the answered timeline in the store: \(error)", fields(overlay))
            }
            if let trackingId { tracker?.record(.answerSucceeded(trackingId: trackingId, at: Timestamp.nowMs())) }
            await publishResult(overlayId, overlay, data: data)
            if overlay.requireBet || overlay.requireVip {
                await post(overlayId, key: "UPDATE_CONFIRM", data: ["timelineId": .string(timelineId), "success": true])
            }
            if overlay.kind == .lucky, let number = data["number"], !number.isNull {
                await post(overlayId, key: "UPDATE_NUMBER_LUCKY", data: ["number": number])
            }
        case .failure(let reason, let step):
            if let trackingId { tracker?.record(.answerFailed(trackingId: trackingId, reason: reason, step: step, at: Timestamp.nowMs())) }
            await publishResult(overlayId, overlay, failure: reason)
        }
    }

    /// Reasons that mean the backend or the network failed, not a rule of the flow.
    private static let backendFailures: Set<String> = ["network_error", "unknown_response", "api_false", "api_unauthorized"]

    private func publishResult(_ overlayId: String, _ overlay: IncomingOverlay, failure reason: String) async {
        await bus.publish(EventType.answerResult, ["overlayId": .string(overlayId), "timelineId": .string(overlay.timelineId),
                                                   "status": "failure", "reason": .string(reason)])
        let priority: LogPriority = Self.backendFailures.contains(reason) || reason.hasPrefix("api_") ? .warning : .info
        log.log(priority, "Answer for \(overlayId) failed (\(logDetail(overlay))): \(reason)",
                fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "failure",
                                         "INTERACTIVE_ANSWER_REASON": reason]) { $1 }, id: .answerResult)
    }

    private func publishResult(_ overlayId: String, _ overlay: IncomingOverlay, data: JSONValue) async {
        await bus.publish(EventType.answerResult, ["overlayId": .string(overlayId), "timelineId": .string(overlay.timelineId),
                                                   "status": "success", "reason": nil, "data": data])
        log.info("Answer for \(overlayId) accepted (\(logDetail(overlay)))",
                 fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId, "INTERACTIVE_ANSWER_STATUS": "success"]) { $1 },
                 id: .answerResult)
    }
}
