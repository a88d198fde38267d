/// Tracking's store writes that the store refused (a full or read-only disk), kept in order to be
/// tried again. Pure: `TrackingService` decides when.
struct RefusedWrites {
    private(set) var writes: [TrackingWrite] = []

    var count: Int { writes.count }
    var isEmpty: Bool { writes.isEmpty }

    mutating func append(_ refused: [TrackingWrite]) { writes += refused }

    /// Takes the writes to try again, oldest first: an ack no longer waiting (`isWaiting` false:
    /// delivered meanwhile) is not stored again, only its session's state; a session state that
    /// a later write replaces is dropped, so a long outage keeps one state per session.
    mutating func takeForRetry(isWaiting: (PendingAck) -> Bool) -> [TrackingWrite] {
        var kept: [TrackingWrite] = []
        var statesSeen: Set<String> = []
        for write in writes.reversed() {
            switch write {
            case .ack(let ack, let state, let at):
                if isWaiting(ack) {
                    kept.append(write)
                } else if !statesSeen.contains(ack.trackingId) {
                    kept.append(.session(ack.trackingId, state: state, at: at))
                }
                statesSeen.insert(ack.trackingId)
            case .session(let trackingId, _, _):
                if statesSeen.insert(trackingId).inserted { kept.append(write) }
            case .deleteAck:
                kept.append(write)
            }
        }
        writes = []
        return kept.reversed()
    }
}
