/// What the overlay pipeline reports about an overlay's life (emit-ack tracking, live mode only).
/// Every call names the overlay by its `_trackingId`; unknown or finished ids are ignored.
protocol OverlayTracker: Sendable {
    func received(trackingId: String, timelineId: String, overlayType: String, emitTimestamp: Int64?, receivedAt: Int64) async
    func keptOffScreen(trackingId: String, reason: String) async
    func shown(trackingId: String) async
    func attached(trackingId: String, at: Int64) async
    func loaded(trackingId: String, at: Int64) async
    func failed(trackingId: String, reason: String?, at: Int64) async
    func cancelled(trackingId: String, reason: String) async
    func answerAttempted(trackingId: String, at: Int64) async
    func answerSucceeded(trackingId: String, at: Int64) async
    func answerFailed(trackingId: String, reason: String, step: String?, at: Int64) async
    func updateViewport(width: Int, height: Int) async
}
