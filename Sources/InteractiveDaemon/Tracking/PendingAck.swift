import JSONValue

/// One `emit-ack` waiting for the server, keyed by tracking id and stage.
public struct PendingAck: Sendable, Equatable {
    package let trackingId: String
    package let stage: TrackingStage
    /// The whole `emit-ack` payload as JSON text, written once when the stage was decided: sent,
    /// stored and counted as it is.
    let payload: [UInt8]
    /// Where its send-time members are in `payload` (nil for an ack read back from the store).
    let stamps: AckStamps?
    /// When it was queued (ms since the epoch).
    let created: Int64

    /// An ack of `stage` for the session `trackingId` with its payload's JSON text (one valid
    /// value), queued at `created` (ms since the epoch).
    init(trackingId: String, stage: TrackingStage, payload: [UInt8], stamps: AckStamps?, created: Int64) {
        self.trackingId = trackingId
        self.stage = stage
        self.payload = payload
        self.stamps = stamps
        self.created = created
    }

    /// An ack whose payload is `value` (an ack read back from the store, a simulation's).
    public init(trackingId: String, stage: TrackingStage, payload value: JSONValue, created: Int64) {
        self.init(trackingId: trackingId, stage: stage, payload: value.serialized(), stamps: nil, created: created)
    }

    /// `payload`'s size as JSON text (the outbox's bound counts it).
    var byteCount: Int { payload.count }

    /// The payload as it goes out at `sentAt`: `clientContext.timeline.ackSent` is that moment
    /// and `ackLatencyMs` runs to it, not to `created` (when the ack was queued), so an ack that
    /// waited for the store or a connection says how long it waited. Sent when decided (the
    /// usual case), it is the text as written; else its two members are patched in the text
    /// (an ack read back from the store is parsed and written again).
    func payload(sentAt: Int64) -> [UInt8] {
        guard sentAt != created else { return payload }
        if let stamped = stamps?.restamped(payload, sentAt: sentAt) { return stamped }
        guard case .object(var members)? = try? JSONValue.parse(payload),
              case .object(var context)? = members["clientContext"] else { return payload }
        if let queued = context["ackLatencyMs"]?.milliseconds {
            let (waited, overflowWait) = sentAt.subtractingReportingOverflow(created)
            let (latency, overflowSum) = queued.addingReportingOverflow(waited)
            context["ackLatencyMs"] = overflowWait || overflowSum ? .null : JSONValue(milliseconds: latency)
        }
        if case .object(var timeline)? = context["timeline"] {
            timeline["ackSent"] = JSONValue(milliseconds: sentAt)
            context["timeline"] = .object(timeline)
        }
        members["clientContext"] = .object(context)
        return JSONValue.object(members).serialized()
    }

    /// The delivery key: one ack per tracking id and stage.
    func sameKey(as other: PendingAck) -> Bool { trackingId == other.trackingId && stage == other.stage }

    /// The `emit-ack` payload's text: `{trackingId, event: "overlay", stage, deviceId,
    /// clientContext}`, the context's members written by `context` (the common ones, then the
    /// stage's, noting where the send-time members are in `stamps`).
    static func payload(trackingId: String, stage: TrackingStage, deviceId: String, stamps: inout AckStamps,
                        context: (inout JSONWriter, inout AckStamps) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: 768)
        writer.beginObject()
        writer.member("trackingId", trackingId)
        writer.member("event", "overlay")
        writer.member("stage", stage.rawValue)
        writer.member("deviceId", deviceId)
        writer.key("clientContext")
        writer.beginObject()
        context(&writer, &stamps)
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}
