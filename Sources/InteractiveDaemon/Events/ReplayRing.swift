/// The events kept for `events.subscribe` with `since`: the newest `capacity` events, or fewer
/// when they would take more than `byteCapacity` bytes (the oldest go first), but never fewer
/// than `minimumCount` (IPC.md: a ring of at least 1024; events are small, `raw` and posted
/// data are bounded, so those take a few MiB at most).
struct ReplayRing: Sendable {
    struct Entry: Sendable {
        let seq: Int
        let type: String
        let line: [UInt8]
        /// The line observers get, when it differs (a play ticket's token nulled).
        var observerLine: [UInt8]? = nil

        func line(for role: ClientRole) -> [UInt8] { role == .observer ? observerLine ?? line : line }

        /// What the entry holds, in bytes.
        var size: Int { line.count + (observerLine?.count ?? 0) }
    }

    let capacity: Int
    let byteCapacity: Int
    let minimumCount: Int
    /// Held entries are `storage[head...]`; a dropped entry is nil at once (its line is freed:
    /// the byte bound holds), and the dead prefix is dropped once it is large.
    private var storage: [Entry?] = []
    private var head = 0
    private(set) var byteCount = 0

    init(capacity: Int, byteCapacity: Int, minimumCount: Int = 1024) {
        self.capacity = max(1, capacity)
        self.byteCapacity = max(1, byteCapacity)
        self.minimumCount = min(max(1, minimumCount), self.capacity)
    }

    var count: Int { storage.count - head }

    /// The seq of the oldest event held.
    var oldestSeq: Int? { head < storage.count ? storage[head]?.seq : nil }

    mutating func append(_ entry: Entry) {
        storage.append(entry)
        byteCount += entry.size
        while count > capacity || (byteCount > byteCapacity && count > minimumCount) {
            byteCount -= storage[head]?.size ?? 0
            storage[head] = nil
            head += 1
        }
        if head >= 1024 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// The held entries after `since` that `matches` accepts, oldest first, as many of the
    /// newest as fit in `byteLimit` bytes; `skipped` counts the accepted ones left out.
    func entries(after since: Int, byteLimit: Int, matching matches: (Entry) -> Bool) -> (entries: [Entry], skipped: Int) {
        var picked: [Entry] = []
        var bytes = 0
        var skipped = 0
        var index = storage.count - 1
        while index >= head, let entry = storage[index], entry.seq > since {
            index -= 1
            guard matches(entry) else { continue }
            if skipped == 0 && bytes + entry.line.count <= byteLimit {
                picked.append(entry)
                bytes += entry.line.count
            } else {
                skipped += 1
            }
        }
        return (picked.reversed(), skipped)
    }
}
