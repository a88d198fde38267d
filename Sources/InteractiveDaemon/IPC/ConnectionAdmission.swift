/// Which local connections are let in: at most `maxClients` in all, of which `controlReserve`
/// slots only the control role may take, at most `perUIDLimit` from one uid other than root, and
/// at most `observerLimit` observers in all. So an observer (any local user) cannot fill the
/// table and lock the players out, and observers together cannot make the daemon hold more
/// than their connections cost (docs/ipc.md, "Limits").
/// A pure value: the server asks it on every accept and tells it when a connection ends.
struct ConnectionAdmission: Sendable {
    enum Refusal: Sendable, Equatable {
        /// Every slot is taken.
        case full
        /// Only reserved slots are left, and the peer is an observer.
        case reservedForControl
        /// The peer's uid already holds `limit` connections.
        case tooManyFromUID(limit: Int)
        /// Observers already hold `limit` connections.
        case tooManyObservers(limit: Int)
    }

    let maxClients: Int
    let controlReserve: Int
    let perUIDLimit: Int
    let observerLimit: Int
    private(set) var total = 0
    private var observers = 0
    private var byUID: [UInt32: Int] = [:]

    /// The limits for `maxClients`: an eighth of the slots (at most 32) kept for the control
    /// role, at most 64 connections per uid, and at most 128 observers.
    init(maxClients: Int) {
        self.maxClients = max(1, maxClients)
        controlReserve = min(32, self.maxClients / 8)
        perUIDLimit = min(64, self.maxClients)
        observerLimit = min(128, self.maxClients - controlReserve)
    }

    /// Counts the connection in, or says why it is refused. `uid` nil: credentials unknown
    /// (then only the total and the reserve apply).
    mutating func admit(role: ClientRole, uid: UInt32?) -> Refusal? {
        guard total < maxClients else { return .full }
        if role == .observer && total >= maxClients - controlReserve { return .reservedForControl }
        if let uid, uid != 0, byUID[uid, default: 0] >= perUIDLimit { return .tooManyFromUID(limit: perUIDLimit) }
        if role == .observer && observers >= observerLimit { return .tooManyObservers(limit: observerLimit) }
        total += 1
        if role == .observer { observers += 1 }
        if let uid { byUID[uid, default: 0] += 1 }
        return nil
    }

    /// A connection admitted with `uid` and `role` ended.
    mutating func leave(uid: UInt32?, role: ClientRole) {
        total = max(0, total - 1)
        if role == .observer { observers = max(0, observers - 1) }
        guard let uid, let count = byUID[uid] else { return }
        byUID[uid] = count > 1 ? count - 1 : nil
    }
}
