import Runtime

/// What the overlay pipeline reports about an overlay's life (emit-ack tracking, live mode only).
/// Every event names the overlay by its `_trackingId`; unknown or finished ids are ignored.
enum TrackingEvent: Sendable, Equatable {
    /// `durationSec`: the overlay's `duration` (0: none), reported with `rendered`.
    case received(trackingId: String, timelineId: String, overlayType: String, emitTimestamp: Int64?, durationSec: Int = 0,
                  receivedAt: Int64)
    case keptOffScreen(trackingId: String, reason: String)
    case shown(trackingId: String)
    case attached(trackingId: String, at: Int64)
    case loaded(trackingId: String, at: Int64)
    case failed(trackingId: String, reason: String?, at: Int64)
    case cancelled(trackingId: String, reason: String)
    case answerAttempted(trackingId: String, at: Int64)
    case answerSucceeded(trackingId: String, at: Int64)
    case answerFailed(trackingId: String, reason: String, step: String?, at: Int64)
}

/// Where the overlay pipeline records tracking events, synchronously, on the loop (`Tracker`).
@LoopActor
protocol OverlayTracker: AnyObject {
    func record(_ event: TrackingEvent)
}
