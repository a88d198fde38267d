import SocketIO

/// The acks decided and not yet delivered, in the order they were decided, with where each one
/// stands: waiting to be sent (the connection is down, or its store write comes first), or sent
/// (with where it was written, so that the heartbeat's proof can count it delivered), and whether
/// a row of it is in the store. Pure; `TrackingBook` keeps it.
/// (Public: the fleet simulation, a separate package in Benchmarks/, models a device's resent acks with it.)
public struct AckOutbox: Sendable {
    /// Whether an ack went out on the current connection.
    enum Delivery: Sendable, Equatable {
        case waiting
        /// Written at the mark (nil: on a connection that gives no proof).
        case sent(SocketIOWriteMark?)
    }

    struct Entry: Sendable {
        let ack: PendingAck
        var delivery: Delivery
        /// A row of it is in the store (or being written).
        var stored: Bool
        /// It waits for its store write before it may be sent (its session has a row, and the
        /// row and the ack are written together first).
        var held: Bool
        /// When it must be stored if it is still not delivered (nil: held; ignored once stored).
        var storeBy: ContinuousClock.Instant?
        let size: Int
    }

    /// One ack per tracking id and stage.
    struct Key: Hashable, Sendable {
        let trackingId: String
        let stage: TrackingStage

        init(_ ack: PendingAck) {
            trackingId = ack.trackingId
            stage = ack.stage
        }
    }

    private(set) var entries: [Entry] = []
    private var keys: Set<Key> = []
    /// What the waiting acks' payloads take, in bytes.
    package private(set) var byteCount = 0

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

    /// Adds an ack, unless one with its key is waiting already. `held`: it waits for its store
    /// write; else, undelivered at `storeBy`, it is to be stored. Returns the acks dropped to make
    /// room (the oldest).
    mutating func append(_ ack: PendingAck, held: Bool, storeBy: ContinuousClock.Instant?) -> [Entry] {
        guard keys.insert(Key(ack)).inserted else { return [] }
        let entry = Entry(ack: ack, delivery: .waiting, stored: held, held: held, storeBy: held ? nil : storeBy, size: ack.byteCount)
        entries.append(entry)
        byteCount += entry.size
        return dropOverflow()
    }

    /// Puts acks read from the store (older than any other) first, skipping keys already
    /// waiting. Returns the acks dropped to stay within the bounds.
    @discardableResult
    public mutating func prependStored(_ acks: [PendingAck]) -> [PendingAck] {
        var fresh: [Entry] = []
        for ack in acks where keys.insert(Key(ack)).inserted {
            let entry = Entry(ack: ack, delivery: .waiting, stored: true, held: false, storeBy: nil, size: ack.byteCount)
            fresh.append(entry)
            byteCount += entry.size
        }
        entries.insert(contentsOf: fresh, at: 0)
        return dropOverflow().map(\.ack)
    }

    private mutating func dropOverflow() -> [Entry] {
        var count = max(0, entries.count - Self.capacity)
        var remainingBytes = byteCount - entries.prefix(count).reduce(0) { $0 + $1.size }
        while remainingBytes > Self.byteCapacity && entries.count - count > 1 {
            remainingBytes -= entries[count].size
            count += 1
        }
        guard count > 0 else { return [] }
        let dropped = Array(entries.prefix(count))
        entries.removeFirst(count)
        byteCount = remainingBytes
        for entry in dropped { keys.remove(Key(entry.ack)) }
        return dropped
    }

    /// Whether an ack with this key is waiting.
    func contains(_ ack: PendingAck) -> Bool { keys.contains(Key(ack)) }

    /// The acks to send now, oldest first: not sent on this connection, and not held.
    public var sendable: [PendingAck] { entries.filter { $0.delivery == .waiting && !$0.held }.map(\.ack) }

    /// The ack was written at `mark` (nil: on a connection that gives no proof).
    mutating func markSent(_ ack: PendingAck, at mark: SocketIOWriteMark?) {
        guard let index = index(of: ack, newest: true) else { return }
        entries[index].delivery = .sent(mark)
    }

    /// The connection is gone: every ack sent on it waits again (sent again on the next one).
    public mutating func connectionLost() {
        for index in entries.indices { entries[index].delivery = .waiting }
    }

    /// Removes a delivered ack; nil when it was no longer waiting.
    mutating func remove(_ ack: PendingAck) -> Entry? {
        guard keys.remove(Key(ack)) != nil, let index = index(of: ack) else { return nil }
        let entry = entries.remove(at: index)
        byteCount -= entry.size
        return entry
    }

    /// Removes every ack the connection is proven to have carried: sent at a mark `mark` covers.
    mutating func removeCarried(upTo mark: SocketIOWriteMark) -> [Entry] {
        var carried: [Entry] = []
        entries.removeAll { entry in
            guard case .sent(let sentAt?) = entry.delivery, mark.covers(sentAt) else { return false }
            carried.append(entry)
            return true
        }
        for entry in carried {
            keys.remove(Key(entry.ack))
            byteCount -= entry.size
        }
        return carried
    }

    /// The acks to store now: undelivered past their `storeBy` (all of them with `everything`),
    /// and not stored yet. They count as stored from now on.
    mutating func takeDueForStore(now: ContinuousClock.Instant, everything: Bool) -> [PendingAck] {
        var due: [PendingAck] = []
        for index in entries.indices where !entries[index].stored {
            guard everything || (entries[index].storeBy.map { $0 <= now } ?? false) else { continue }
            entries[index].stored = true
            due.append(entries[index].ack)
        }
        return due
    }

    /// The acks not in the store (within the store's delay, held for their write, or refused).
    var unstoredCount: Int { entries.count { !$0.stored } }

    /// The earliest moment an ack is to be stored.
    var nextStoreDue: ContinuousClock.Instant? {
        // By index, reading two fields: a filter over the entries copied each one (its ack's
        // strings retained and released), 15 copies an overlay under a steady stream.
        var earliest: ContinuousClock.Instant?
        for index in entries.indices where !entries[index].stored {
            guard let due = entries[index].storeBy else { continue }
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// The store did not take `ack` (a full disk): it is to be stored again from `retryAt`.
    mutating func storeFailed(_ ack: PendingAck, retryAt: ContinuousClock.Instant) {
        guard let index = index(of: ack) else { return }
        entries[index].stored = false
        entries[index].storeBy = retryAt
    }

    /// The held ack's store write is done (or failed: it goes from memory): it may be sent.
    /// Returns whether it was held (and is still waiting).
    mutating func release(_ ack: PendingAck) -> Bool {
        guard let index = index(of: ack, newest: true), entries[index].held else { return false }
        entries[index].held = false
        return true
    }

    /// Where `ack` is: searched from the oldest (what the server acknowledges, in order) or
    /// from the `newest` (what was just decided: sent or released).
    private func index(of ack: PendingAck, newest: Bool = false) -> Int? {
        let matches: (Entry) -> Bool = { $0.ack.stage == ack.stage && $0.ack.trackingId == ack.trackingId }
        return newest ? entries.lastIndex(where: matches) : entries.firstIndex(where: matches)
    }
}
