import JSONValue

/// One `emit-ack` waiting for the server, keyed by tracking id and stage.
package struct PendingAck: Sendable {
    package let trackingId: String
    package let stage: TrackingStage
    /// The whole `emit-ack` payload, built when the stage was decided.
    let payload: JSONValue
    /// When it was queued (ms since the epoch).
    let created: Int64

    package init(trackingId: String, stage: TrackingStage, payload: JSONValue, created: Int64) {
        self.trackingId = trackingId
        self.stage = stage
        self.payload = payload
        self.created = created
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
