import JSONValue

/// How `rendered` ended, with what `clientContext` says about it.
struct RenderOutcome: Sendable {
    let status: RenderStatus
    /// The stage's own moment: load complete, the failure, the timeout or the cancel.
    let at: Int64
    var failureReason: String?
    var failureStep: String?
    var cancelReason: String?
    /// The player's own words about a load failure.
    var detail: String?
}

/// The answer stages' facts.
struct AnswerOutcome: Sendable {
    /// `answer`, `answer-succeeded` or `answer-failed`.
    let stage: TrackingStage
    /// When the answer was submitted or its result came.
    let at: Int64
    var failureReason: String?
    var failureStep: String?
}

/// The stage members of `clientContext`, as BACKEND.md "emit-ack tracking" lists them.
/// `readyReceived` is always null: the daemon settles `rendered` on the player's load report.
extension TrackingSession {
    /// `receive − _emitTimestamp`, null without an emit timestamp or when the difference does not
    /// fit (the timestamp is the backend's: never trap on it).
    var receiveLatencyMs: JSONValue {
        JSONValue(milliseconds: emitTimestamp.flatMap { emitted in
            let (latency, overflow) = receivedAt.subtractingReportingOverflow(emitted)
            return overflow ? nil : latency
        })
    }

    /// `received`: emit and receive timestamps, latencies, and the timeline so far.
    func receivedFields(ackSent: Int64) -> [String: JSONValue] {
        [
            "emitTimestamp": JSONValue(milliseconds: emitTimestamp),
            "receiveTimestamp": JSONValue(milliseconds: receivedAt),
            "receiveLatencyMs": receiveLatencyMs,
            "ackLatencyMs": JSONValue(milliseconds: ackSent - receivedAt),
            "timeline": ["received": JSONValue(milliseconds: receivedAt), "ackSent": JSONValue(milliseconds: ackSent)],
        ]
    }

    /// `rendered`: status, latencies, the render timeline, and why it failed or was cancelled.
    func renderedFields(_ outcome: RenderOutcome, ackSent: Int64) -> [String: JSONValue] {
        var custom: [String: JSONValue] = ["cancelReason": JSONValue(outcome.cancelReason)]
        if let detail = outcome.detail { custom["detail"] = .string(detail) }
        return [
            "status": .string(outcome.status.rawValue),
            "receiveLatencyMs": receiveLatencyMs,
            "renderLatencyMs": JSONValue(milliseconds: loadCompleteAt.map { $0 - receivedAt }),
            "ackLatencyMs": JSONValue(milliseconds: ackSent - outcome.at),
            "timeline": [
                "attached": JSONValue(milliseconds: attachedAt),
                "renderStart": JSONValue(milliseconds: attachedAt),
                "loadComplete": JSONValue(milliseconds: loadCompleteAt),
                "readyReceived": .null,
                "ackSent": JSONValue(milliseconds: ackSent),
            ],
            "duration": durationSec.map { .number(Double($0)) } ?? .null,
            "overlayType": .string(overlayType),
            "failureReason": JSONValue(outcome.failureReason),
            "failureStep": JSONValue(outcome.failureStep),
            "custom": .object(custom),
        ]
    }

    /// The answer stages: `actionLatencyMs = action − (readyReceived ?? loadComplete ?? renderStart ?? receive)`.
    func answerFields(_ outcome: AnswerOutcome, ackSent: Int64) -> [String: JSONValue] {
        let reference = loadCompleteAt ?? attachedAt ?? receivedAt
        return [
            "actionType": "answer_submit",
            "actionResult": JSONValue(outcome.stage.actionResult),
            "actionLatencyMs": JSONValue(milliseconds: outcome.at - reference),
            "ackLatencyMs": JSONValue(milliseconds: ackSent - outcome.at),
            "occurrenceId": .string(timelineId),
            "overlayType": .string(overlayType),
            "failureReason": JSONValue(outcome.failureReason),
            "failureStep": JSONValue(outcome.failureStep),
            "custom": [:],
            "timeline": [
                "received": JSONValue(milliseconds: receivedAt),
                "attached": JSONValue(milliseconds: attachedAt),
                "renderStart": JSONValue(milliseconds: attachedAt),
                "loadComplete": JSONValue(milliseconds: loadCompleteAt),
                "readyReceived": .null,
                "action": JSONValue(milliseconds: outcome.at),
                "ackSent": JSONValue(milliseconds: ackSent),
            ],
        ]
    }
}
