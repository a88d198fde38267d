import Synchronization

/// The bytes every local connection holds for its client, bounded together: its replies and
/// events not written yet (queued, or taken by its writer), and its request line not complete
/// yet. Whatever the mix of clients, the daemon holds at most `limit` bytes for them
/// (docs/ipc.md, "Limits"). Each connection's `OutboundQueue` reports what it holds; past the
/// limit the budget names the connections to stop: observers before control clients, and
/// among them those holding most, until the rest fit.
///
/// Lock order: a queue reports under its own lock, so the budget never takes a queue's lock;
/// the queues it names are stopped by the caller once both locks are released.
final class ClientMemoryBudget: Sendable {
    /// The default: 8 MiB for all local clients. The unit's `MemoryHigh` is 48 MiB; the daemon
    /// runs in about 17, and each connection costs about 16 KiB more when idle
    /// (Benchmarks/floods.py: the worst mix of observers measured peaks at 36 MiB).
    static let defaultLimit = 8 << 20

    let limit: Int

    private struct Holder {
        let queue: OutboundQueue
        var bytes: Int
        /// Named to stop already: not named again, and its bytes are counted as going.
        var stopping = false
    }

    private struct State {
        var holders: [Int: Holder] = [:]
        var total = 0
    }

    private let state = Mutex(State())

    /// The holder to stop next: an observer before a control client, then the one holding most.
    private static func nextVictim(in holders: [Int: Holder]) -> (Int, Holder)? {
        var best: (id: Int, holder: Holder)?
        for (id, holder) in holders where !holder.stopping && holder.bytes > 0 {
            guard let current = best else {
                best = (id, holder)
                continue
            }
            let rank = (holder.queue.isObserver ? 1 : 0, holder.bytes)
            let bestRank = (current.holder.queue.isObserver ? 1 : 0, current.holder.bytes)
            if rank > bestRank { best = (id, holder) }
        }
        return best.map { ($0.id, $0.holder) }
    }

    init(limit: Int = ClientMemoryBudget.defaultLimit) {
        self.limit = limit
    }

    /// The bytes all connections hold now.
    var total: Int { state.withLock { $0.total } }

    /// Counts `queue` (holding nothing yet).
    func register(_ queue: OutboundQueue) {
        state.withLock { $0.holders[queue.id] = Holder(queue: queue, bytes: 0) }
    }

    /// Forgets the queue of connection `id` (its connection ended).
    func unregister(_ id: Int) {
        state.withLock { state in
            if let holder = state.holders.removeValue(forKey: id) { state.total -= holder.bytes }
        }
    }

    /// Queue `id` holds `bytes` now; returns the queues to stop (possibly itself) when all of
    /// them together hold more than `limit`.
    func holds(_ id: Int, bytes: Int) -> [OutboundQueue] {
        state.withLock { state in
            guard var holder = state.holders[id] else { return [] }
            state.total += bytes - holder.bytes
            holder.bytes = bytes
            state.holders[id] = holder
            guard state.total > limit else { return [] }
            var remaining = state.holders.values.reduce(0) { $0 + ($1.stopping ? 0 : $1.bytes) }
            var victims: [OutboundQueue] = []
            while remaining > limit, let (victimID, victim) = Self.nextVictim(in: state.holders) {
                state.holders[victimID]?.stopping = true
                remaining -= victim.bytes
                victims.append(victim.queue)
            }
            return victims
        }
    }
}
