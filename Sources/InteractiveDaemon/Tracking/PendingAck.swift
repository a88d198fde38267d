import JSONValue

/// One `emit-ack` waiting for the server, keyed by tracking id and stage.
public struct PendingAck: Sendable, Equatable {
    package let trackingId: String
    package let stage: TrackingStage
    /// The whole `emit-ack` payload, built when the stage was decided.
    let payload: JSONValue
    /// `payload` as JSON text, serialized once: the store keeps it and the outbox counts its bytes.
    let payloadText: String
    /// When it was queued (ms since the epoch).
    let created: Int64

    /// An ack of `stage` for the session `trackingId`, queued at `created` (ms since the epoch).
    public init(trackingId: String, stage: TrackingStage, payload: JSONValue, created: Int64) {
        self.trackingId = trackingId
        self.stage = stage
        self.payload = payload
        self.payloadText = payload.jsonText
        self.created = created
    }

    /// The payload as it goes out at `sentAt`: `clientContext.timeline.ackSent` is that moment
    /// and `ackLatencyMs` runs to it, not to `created` (when the ack was queued), so an ack that
    /// waited for the store, a lane or a connection says how long it waited.
    func payload(sentAt: Int64) -> JSONValue {
        guard case .object(var members) = payload, case .object(var context)? = members["clientContext"] else { return payload }
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
        return .object(members)
    }

    /// The delivery key: one ack per tracking id and stage.
    func sameKey(as other: PendingAck) -> Bool { trackingId == other.trackingId && stage == other.stage }

    /// The `emit-ack` payload: `{trackingId, event: "overlay", stage, deviceId, clientContext}`.
    static func payload(trackingId: String, stage: TrackingStage, deviceId: String, clientContext: JSONValue) -> JSONValue {
        [
            "trackingId": .string(trackingId),
            "event": "overlay",
            "stage": .string(stage.rawValue),
            "deviceId": .string(deviceId),
            "clientContext": clientContext,
        ]
    }
}
