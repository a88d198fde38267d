import JSONValue

/// The acks waiting for the server, in the order they were decided, and which sessions have a
/// delivery lane running. Each session's acks go out one after the other (received before
/// rendered); sessions are delivered side by side. An ack is handed out only once it is stored.
/// (Public: the fleet simulation, a separate package in Benchmarks/, paces its resent acks with it.)
public struct AckOutbox: Sendable {
    private struct Entry {
        let ack: PendingAck
        var stored: Bool
        /// The payload's size in bytes, as it is stored and sent.
        let size: Int

        init(ack: PendingAck, stored: Bool) {
            self.ack = ack
            self.stored = stored
            size = ack.payloadText.utf8.count
        }
    }

    private struct Key: Hashable {
        let trackingId: String
        let stage: TrackingStage

        init(_ ack: PendingAck) {
            trackingId = ack.trackingId
            stage = ack.stage
        }
    }

    private var entries: [Entry] = []
    /// What the waiting acks' payloads take, in bytes.
    package private(set) var byteCount = 0
    private var keys: Set<Key> = []
    private var lanes: Set<String> = []

    /// At most this many sessions are delivered side by side.
    public static let maxLanes = 8
    /// At most this many acks wait (an offline daemon under a flood of overlays must not grow
    /// without bound); beyond it the oldest are dropped (docs/ipc.md, "Limits").
    package static let capacity = 1024
    /// At most this many bytes of payloads wait: the backend chooses the tracking and timeline
    /// ids an ack carries (up to a whole message each), so the count alone bounds nothing.
    /// Beyond it the oldest are dropped; one ack alone is kept whatever its size.
    package static let byteCapacity = 1 << 20

    /// An empty outbox.
    public init() {}

    package var count: Int { entries.count }

    /// Adds an ack not yet stored, unless one with the same key is already waiting. Returns the
    /// acks dropped to make room (the oldest), which the caller forgets in the store too.
    @discardableResult
    package mutating func append(_ ack: PendingAck) -> [PendingAck] {
        guard keys.insert(Key(ack)).inserted else { return [] }
        let entry = Entry(ack: ack, stored: false)
        entries.append(entry)
        byteCount += entry.size
        return dropOverflow()
    }

    /// Puts acks read from the store (older than any other) first, skipping keys already
    /// waiting. Returns the acks dropped to stay within `capacity`.
    @discardableResult
    public mutating func prependStored(_ acks: [PendingAck]) -> [PendingAck] {
        var fresh: [Entry] = []
        for ack in acks where keys.insert(Key(ack)).inserted {
            let entry = Entry(ack: ack, stored: true)
            fresh.append(entry)
            byteCount += entry.size
        }
        entries.insert(contentsOf: fresh, at: 0)
        return dropOverflow()
    }

    private mutating func dropOverflow() -> [PendingAck] {
        var count = max(0, entries.count - Self.capacity)
        var remainingBytes = byteCount - entries.prefix(count).reduce(0) { $0 + $1.size }
        while remainingBytes > Self.byteCapacity && entries.count - count > 1 {
            remainingBytes -= entries[count].size
            count += 1
        }
        guard count > 0 else { return [] }
        let dropped = entries.prefix(count).map(\.ack)
        entries.removeFirst(count)
        byteCount = remainingBytes
        for ack in dropped { keys.remove(Key(ack)) }
        return dropped
    }

    /// Whether an ack with this key is still waiting.
    func contains(_ ack: PendingAck) -> Bool { keys.contains(Key(ack)) }

    /// The ack may be sent: it is in `pending_acks` (or storing it failed and it goes from memory).
    package mutating func markStored(_ ack: PendingAck) {
        if let index = entries.firstIndex(where: { $0.ack.sameKey(as: ack) }) { entries[index].stored = true }
    }

    /// Removes a delivered ack; false when it was no longer waiting.
    public mutating func remove(_ ack: PendingAck) -> Bool {
        guard keys.remove(Key(ack)) != nil, let index = entries.firstIndex(where: { $0.ack.sameKey(as: ack) }) else {
            return false
        }
        byteCount -= entries.remove(at: index).size
        return true
    }

    /// The session's next ack when it is stored; nil when it has none or the next is still being stored.
    public func next(for trackingId: String) -> PendingAck? {
        guard let entry = entries.first(where: { $0.ack.trackingId == trackingId }), entry.stored else { return nil }
        return entry.ack
    }

    /// Up to `limit` lanes in all: sessions whose next ack is sendable and that have no lane,
    /// oldest first. Their lanes count as running.
    public mutating func claimLanes(upTo limit: Int) -> [String] {
        var claimed: [String] = []
        var seen: Set<String> = []
        for entry in entries where lanes.count < limit && seen.insert(entry.ack.trackingId).inserted {
            if entry.stored && lanes.insert(entry.ack.trackingId).inserted { claimed.append(entry.ack.trackingId) }
        }
        return claimed
    }

    /// The session's lane stopped (its acks are delivered, or the transport changed).
    public mutating func endLane(_ trackingId: String) { lanes.remove(trackingId) }

    /// Forgets every lane (the transport changed; lanes of the old one stop on their own).
    public mutating func resetLanes() { lanes.removeAll() }
}
