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
            return await publishResult(overlayId, timelineId, failure: "already_answered")
        }
        guard context.session.isLoggedIn, let userId = context.session.userId else {
            await bus.publish(EventType.loginRequired, ["overlayId": .string(overlayId), "reason": "answer"])
            return await publishResult(overlayId, timelineId, failure: "login_required")
        }
        if overlay.requireFanclub && !context.fanclub {
            await bus.publish(EventType.fanclubRequired, ["overlayId": .string(overlayId), "mediaId": .string(context.mediaId)])
            return await publishResult(overlayId, timelineId, failure: "fanclub_required")
        }
        answering.insert(timelineId)
        defer { answering.remove(timelineId) }
        let api: BackendAPI
        do {
            api = try BackendAPI(settings: context.settings, token: context.session.token)
        } catch {
            log.error("Cannot answer: \(error.message)", fields(overlay))
            return await publishResult(overlayId, timelineId, failure: "network_error")
        }

        if overlay.requireVip || overlay.requireBet {
            let status: (vip: Bool, bet: Bool)
            do {
                status = try await api.vipStatus(mediaId: context.mediaId)
            } catch {
                log.warning("VIP status unavailable: \(error)", fields(overlay))
                return await publishResult(overlayId, timelineId, failure: error.answerFailure.reason)
            }
            if overlay.requireVip && !status.vip { return await publishResult(overlayId, timelineId, failure: "vip_required") }
            if overlay.requireBet {
                guard status.bet else { return await publishResult(overlayId, timelineId, failure: "bet_not_allowed") }
                await bus.publish(EventType.answerConfirm, [
                    "overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": "bet",
                    "amount": .number(overlay.betAmount), "vip": .bool(status.vip), "bet": .bool(status.bet),
                ])
                let accepted = await withCheckedContinuation { confirmations[overlayId] = $0 }
                guard accepted else { return await publishResult(overlayId, timelineId, failure: "bet_declined") }
            }
        }

        let trackingId = record.trackingId
        if let trackingId { tracker?.record(.answerAttempted(trackingId: trackingId, at: Timestamp.nowMs())) }
        let body: JSONValue = [
            "mediaId": .string(context.mediaId), "timelineId": .string(timelineId), "os": JSONValue(context.settings.os),
            "socketId": context.mode == .live ? JSONValue(context.socketId) : .null, "userId": .string(userId),
            "mode": .string(context.mode.rawValue), "answer": answer,
        ]
        log.info("Submitting an answer", fields(overlay), id: .answerSubmitted)
        switch await api.postAction(body) {
        case .success(let data):
            answered.insert(timelineId)
            do {
                try await store.markAnswered(viewer: context.session.answeredBucket, media: context.mediaId, timeline: timelineId)
            } catch {
                log.error("Cannot keep the answered timeline in the store: \(error)", fields(overlay))
            }
            if let trackingId { tracker?.record(.answerSucceeded(trackingId: trackingId, at: Timestamp.nowMs())) }
            await publishResult(overlayId, timelineId, data: data)
            if overlay.requireBet || overlay.requireVip {
                await post(overlayId, key: "UPDATE_CONFIRM", data: ["timelineId": .string(timelineId), "success": true])
            }
            if overlay.kind == .lucky, let number = data["number"], !number.isNull {
                await post(overlayId, key: "UPDATE_NUMBER_LUCKY", data: ["number": number])
            }
        case .failure(let reason, let step):
            log.warning("Answer refused: \(reason)", fields(overlay))
            if let trackingId { tracker?.record(.answerFailed(trackingId: trackingId, reason: reason, step: step, at: Timestamp.nowMs())) }
            await publishResult(overlayId, timelineId, failure: reason)
        }
    }

    private func publishResult(_ overlayId: String, _ timelineId: String, failure reason: String) async {
        await bus.publish(EventType.answerResult, ["overlayId": .string(overlayId), "timelineId": .string(timelineId),
                                                   "status": "failure", "reason": .string(reason)])
    }

    private func publishResult(_ overlayId: String, _ timelineId: String, data: JSONValue) async {
        await bus.publish(EventType.answerResult, ["overlayId": .string(overlayId), "timelineId": .string(timelineId),
                                                   "status": "success", "reason": nil, "data": data])
    }
}
