import IPCProtocol

/// What an event stream remembers across connections: the daemon's boot and the last event seen,
/// from which it resubscribes (`since`, `bootId`), and whether a new subscription means that the
/// daemon restarted.
struct SubscriptionTracker: Sendable, Equatable {
    /// The boot of the last subscription; nil before the first.
    private(set) var bootId: String?
    /// The last seq seen in that boot (or the caller's `since` before the first subscription).
    private(set) var lastSeq: Int?

    init(since: Int?) {
        lastSeq = since
    }

    /// A subscription's reply; returns what the stream yields for it, in order.
    mutating func subscribed(_ reply: SubscribeResult) -> [ClientEvent] {
        var yielded: [ClientEvent] = []
        if let previous = bootId, previous != reply.bootId {
            // A new boot replays nothing: its snapshot covers everything up to its seq.
            yielded.append(.restarted(previousBootId: previous, bootId: reply.bootId))
            lastSeq = reply.seq
        } else if lastSeq == nil {
            lastSeq = reply.seq
        }
        bootId = reply.bootId
        yielded.append(.subscribed(reply))
        return yielded
    }

    /// An event of the subscription.
    mutating func received(_ envelope: EventEnvelope) -> ClientEvent {
        if let seq = envelope.seq, envelope.bootId == bootId { lastSeq = seq }
        return .event(envelope)
    }
}
