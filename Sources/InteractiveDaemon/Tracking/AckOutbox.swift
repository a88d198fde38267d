/// The acks waiting for the server, in the order they were decided, and which sessions have a
/// delivery lane running. Each session's acks go out one after the other (received before
/// rendered); sessions are delivered side by side. An ack is handed out only once it is stored.
/// (`package`: the fleet simulation in Benchmarks/fleet paces its resent acks with it.)
package struct AckOutbox {
    private struct Entry {
        let ack: PendingAck
        var stored: Bool
    }

    private var entries: [Entry] = []
    private var lanes: Set<String> = []

    /// At most this many sessions are delivered side by side.
    package static let maxLanes = 8

    package init() {}

    package var count: Int { entries.count }

    /// Adds an ack not yet stored, unless one with the same key is already waiting.
    package mutating func append(_ ack: PendingAck) {
        guard !contains(ack) else { return }
        entries.append(Entry(ack: ack, stored: false))
    }

    /// Puts acks read from the store (older than any other) first, skipping keys already waiting.
    package mutating func prependStored(_ acks: [PendingAck]) {
        var fresh: [Entry] = []
        for ack in acks where !contains(ack) && !fresh.contains(where: { $0.ack.sameKey(as: ack) }) {
            fresh.append(Entry(ack: ack, stored: true))
        }
        entries.insert(contentsOf: fresh, at: 0)
    }

    /// Whether an ack with this key is still waiting.
    func contains(_ ack: PendingAck) -> Bool { entries.contains { $0.ack.sameKey(as: ack) } }

    /// The ack may be sent: it is in `pending_acks` (or storing it failed and it goes from memory).
    package mutating func markStored(_ ack: PendingAck) {
        if let index = entries.firstIndex(where: { $0.ack.sameKey(as: ack) }) { entries[index].stored = true }
    }

    /// Removes a delivered ack; false when it was no longer waiting.
    package mutating func remove(_ ack: PendingAck) -> Bool {
        guard let index = entries.firstIndex(where: { $0.ack.sameKey(as: ack) }) else { return false }
        entries.remove(at: index)
        return true
    }

    /// The session's next ack when it is stored; nil when it has none or the next is still being stored.
    package func next(for trackingId: String) -> PendingAck? {
        guard let entry = entries.first(where: { $0.ack.trackingId == trackingId }), entry.stored else { return nil }
        return entry.ack
    }

    /// Up to `limit` lanes in all: sessions whose next ack is sendable and that have no lane,
    /// oldest first. Their lanes count as running.
    package mutating func claimLanes(upTo limit: Int) -> [String] {
        var claimed: [String] = []
        var seen: Set<String> = []
        for entry in entries where lanes.count < limit && seen.insert(entry.ack.trackingId).inserted {
            if entry.stored && lanes.insert(entry.ack.trackingId).inserted { claimed.append(entry.ack.trackingId) }
        }
        return claimed
    }

    package mutating func endLane(_ trackingId: String) { lanes.remove(trackingId) }

    /// Forgets every lane (the transport changed; lanes of the old one stop on their own).
    package mutating func resetLanes() { lanes.removeAll() }
}
