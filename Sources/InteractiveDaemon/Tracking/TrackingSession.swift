import JSONValue

/// What is known of one tracked overlay (one `_trackingId`) and which stages were sent.
/// Timestamps are milliseconds since the epoch.
struct TrackingSession: Sendable {
    let trackingId: String
    let timelineId: String
    /// `minigame`, `predict` or `lucky`.
    let overlayType: String
    /// The server's `_emitTimestamp`, when it sent one.
    let emitTimestamp: Int64?
    let receivedAt: Int64
    /// The overlay's `duration` in seconds, when it has one.
    var durationSec: Int?
    /// When the overlay was attached to a player; it is also the render start (as on iOS).
    var attachedAt: Int64?
    var loadCompleteAt: Int64?
    var sent: TrackingStages = []

    var renderedSent: Bool { sent.contains(.rendered) }

    /// An answer was sent and its result is still to come.
    var awaitsAnswerResult: Bool {
        sent.contains(.answer) && !sent.contains(.answerSucceeded) && !sent.contains(.answerFailed)
    }

    /// The state kept in `tracking_sessions` while the session is open.
    var stored: JSONValue {
        [
            "timelineId": .string(timelineId),
            "overlayType": .string(overlayType),
            "emitTimestamp": JSONValue(milliseconds: emitTimestamp),
            "receivedAt": JSONValue(milliseconds: receivedAt),
            "attachedAt": JSONValue(milliseconds: attachedAt),
            "loadCompleteAt": JSONValue(milliseconds: loadCompleteAt),
            "durationSec": durationSec.map { .number(Double($0)) } ?? .null,
            "sent": .array(TrackingStage.allCases.filter { sent.contains($0) }.map { .string($0.rawValue) }),
        ]
    }

    init(trackingId: String, timelineId: String, overlayType: String, emitTimestamp: Int64?, receivedAt: Int64) {
        self.trackingId = trackingId
        self.timelineId = timelineId
        self.overlayType = overlayType
        self.emitTimestamp = emitTimestamp
        self.receivedAt = receivedAt
    }

    /// A session read back from its stored state; nil when the state is unusable.
    init?(trackingId: String, stored: JSONValue) {
        guard let timelineId = stored["timelineId"]?.stringValue, let overlayType = stored["overlayType"]?.stringValue,
              let receivedAt = stored["receivedAt"]?.milliseconds else { return nil }
        self.init(trackingId: trackingId, timelineId: timelineId, overlayType: overlayType,
                  emitTimestamp: stored["emitTimestamp"]?.milliseconds, receivedAt: receivedAt)
        attachedAt = stored["attachedAt"]?.milliseconds
        loadCompleteAt = stored["loadCompleteAt"]?.milliseconds
        durationSec = stored["durationSec"]?.intValue
        sent = TrackingStages((stored["sent"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(TrackingStage.init(rawValue:)) })
    }
}

extension JSONValue {
    /// `.number` for a timestamp or a duration in milliseconds, `.null` for nil.
    init(milliseconds: Int64?) { self = milliseconds.map { .number(Double($0)) } ?? .null }

    /// The number as milliseconds when it is integral.
    var milliseconds: Int64? { intValue.map(Int64.init) }
}
