/// The idle kept-alive connections of a client, per key (origin and TLS settings): a value type
/// with no I/O, so its decisions are tested alone. `Handle` is what the client keeps of a
/// connection; `id` names it in the client's tables.
struct ConnectionPool<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    struct Entry: Sendable {
        let id: Int
        let handle: Handle
    }

    /// Idle connections kept per key; one more is closed instead of parked.
    let maxIdlePerKey: Int
    private var idle: [Key: [Entry]] = [:]

    init(maxIdlePerKey: Int) {
        self.maxIdlePerKey = max(0, maxIdlePerKey)
    }

    /// The most recently parked connection for `key` (the least likely to have been closed by
    /// the peer's idle timeout), removed from the pool; nil when there is none or when
    /// `acceptable` refuses it (it then stays parked).
    mutating func take(_ key: Key, if acceptable: (Handle) -> Bool = { _ in true }) -> Entry? {
        guard let last = idle[key]?.last, acceptable(last.handle), let entry = idle[key]?.popLast() else { return nil }
        if idle[key]?.isEmpty == true { idle[key] = nil }
        return entry
    }

    /// Parks a connection that may carry another request. Returns false when the pool for `key`
    /// is full: the caller closes it.
    mutating func park(_ key: Key, id: Int, _ handle: Handle) -> Bool {
        guard idle[key, default: []].count < maxIdlePerKey else { return false }
        idle[key, default: []].append(Entry(id: id, handle: handle))
        return true
    }

    /// Removes the idle connection `id` (the peer closed it, or it idled too long); nil when it
    /// is not idle.
    mutating func remove(id: Int) -> Handle? {
        for (key, entries) in idle {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { continue }
            let handle = entries[index].handle
            idle[key]?.remove(at: index)
            if idle[key]?.isEmpty == true { idle[key] = nil }
            return handle
        }
        return nil
    }

    /// Every idle connection, removed from the pool.
    mutating func removeAll() -> [Handle] {
        defer { idle.removeAll() }
        return idle.values.flatMap { $0.map(\.handle) }
    }

    var count: Int { idle.values.reduce(0) { $0 + $1.count } }
}
