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

/// The stage members of `clientContext`, as BACKEND.md "emit-ack tracking" lists them, written
/// straight into the payload's text (an ack is encoded once, when its stage is decided).
/// `readyReceived` is always null: the daemon settles `rendered` on the player's load report.
extension TrackingSession {
    /// `receive − _emitTimestamp`, nil without an emit timestamp or when the difference does not
    /// fit (the timestamp is the backend's: never trap on it).
    var receiveLatencyMs: Int64? {
        emitTimestamp.flatMap { emitted in
            let (latency, overflow) = receivedAt.subtractingReportingOverflow(emitted)
            return overflow ? nil : latency
        }
    }

    /// `received`: emit and receive timestamps, latencies, and the timeline so far.
    func writeReceived(ackSent: Int64, to writer: inout JSONWriter, stamps: inout AckStamps) {
        writer.member("emitTimestamp", emitTimestamp)
        writer.member("receiveTimestamp", receivedAt)
        writer.member("receiveLatencyMs", receiveLatencyMs)
        stamps.writeLatency(from: receivedAt, ackSent: ackSent, to: &writer)
        writer.key("timeline")
        writer.beginObject()
        writer.member("received", receivedAt)
        stamps.writeAckSent(ackSent, to: &writer)
        writer.endObject()
    }

    /// `rendered`: status, latencies, the render timeline, and why it failed or was cancelled.
    func writeRendered(_ outcome: RenderOutcome, ackSent: Int64, to writer: inout JSONWriter, stamps: inout AckStamps) {
        writer.member("status", outcome.status.rawValue)
        writer.member("receiveLatencyMs", receiveLatencyMs)
        writer.member("renderLatencyMs", loadCompleteAt.flatMap { Self.difference($0, receivedAt) })
        stamps.writeLatency(from: outcome.at, ackSent: ackSent, to: &writer)
        writer.key("timeline")
        writer.beginObject()
        writer.member("attached", attachedAt)
        writer.member("renderStart", attachedAt)
        writer.member("loadComplete", loadCompleteAt)
        writer.key("readyReceived")
        writer.null()
        stamps.writeAckSent(ackSent, to: &writer)
        writer.endObject()
        writer.member("duration", durationSec.map(Int64.init))
        writer.member("overlayType", overlayType)
        writer.member("failureReason", outcome.failureReason)
        writer.member("failureStep", outcome.failureStep)
        writer.key("custom")
        writer.beginObject()
        writer.member("cancelReason", outcome.cancelReason)
        if let detail = outcome.detail { writer.member("detail", detail) }
        writer.endObject()
    }

    /// The answer stages: `actionLatencyMs = action − (readyReceived ?? loadComplete ?? renderStart ?? receive)`.
    func writeAnswer(_ outcome: AnswerOutcome, ackSent: Int64, to writer: inout JSONWriter, stamps: inout AckStamps) {
        let reference = loadCompleteAt ?? attachedAt ?? receivedAt
        writer.member("actionType", "answer_submit")
        writer.member("actionResult", outcome.stage.actionResult)
        writer.member("actionLatencyMs", Self.difference(outcome.at, reference))
        stamps.writeLatency(from: outcome.at, ackSent: ackSent, to: &writer)
        writer.member("occurrenceId", timelineId)
        writer.member("overlayType", overlayType)
        writer.member("failureReason", outcome.failureReason)
        writer.member("failureStep", outcome.failureStep)
        writer.key("custom")
        writer.beginObject()
        writer.endObject()
        writer.key("timeline")
        writer.beginObject()
        writer.member("received", receivedAt)
        writer.member("attached", attachedAt)
        writer.member("renderStart", attachedAt)
        writer.member("loadComplete", loadCompleteAt)
        writer.key("readyReceived")
        writer.null()
        writer.member("action", outcome.at)
        stamps.writeAckSent(ackSent, to: &writer)
        writer.endObject()
    }

    /// `a − b`, nil when it does not fit (times come from players and the backend).
    static func difference(_ a: Int64, _ b: Int64) -> Int64? {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? nil : value
    }
}
