/// The backend's interactive status for the viewer and the room is requested with each
/// join-room, so that a timeline answered elsewhere is not shown right at the join. While it is
/// pending, the backend's events wait here, in order, from the first overlay on; when it arrives
/// (or fails) they are handed back in that order, and events that arrive meanwhile queue behind
/// them. The display path never waits for the request: the pending status is this state. Pure.
struct InteractiveStatusGate<Event> {
    /// At most this many events wait; one more releases them all without the status.
    static var maxHeld: Int { 512 }

    private enum Phase {
        case open
        /// Events wait for the pending request.
        case waiting
        /// The held events are being handed back: new ones queue behind them.
        case draining
    }

    private var phase = Phase.open
    private var held: [Event] = []
    private var lastRequest = 0
    /// The request under way, whose status is waited for.
    private(set) var pendingRequest: Int?

    /// True while events wait for a request under way.
    var isWaiting: Bool { phase == .waiting }

    var heldCount: Int { held.count }

    /// A request begins (join-room sent): returns its id, which `arrived` takes. One still
    /// pending is superseded; the events it held wait for this one.
    mutating func request() -> Int {
        lastRequest &+= 1
        pendingRequest = lastRequest
        if phase == .open { phase = .waiting }
        return lastRequest
    }

    /// An event from the backend: true when the caller handles it now, false when it waits.
    /// `isOverlay`: events wait from the first overlay on (one before it cannot be affected).
    /// Past `maxHeld` events the status is not waited for: `overflowed` then returns true once.
    mutating func admit(_ event: Event, isOverlay: Bool) -> Bool {
        switch phase {
        case .open:
            return true
        case .waiting:
            guard isOverlay || !held.isEmpty else { return true }
        case .draining:
            break
        }
        held.append(event)
        return false
    }

    /// True when more events wait than allowed: the caller stops waiting (`release`).
    var overflowed: Bool { held.count > Self.maxHeld }

    /// Request `id` ended (with or without a status): true when it is the pending one; the
    /// caller then takes the held events with `next` until it returns nil.
    mutating func arrived(_ id: Int) -> Bool {
        guard pendingRequest == id else { return false }
        pendingRequest = nil
        guard phase == .waiting else { return false }
        phase = .draining
        return true
    }

    /// Stops waiting for the pending request (none is needed, or too many events wait); the
    /// caller takes the held events with `next`.
    mutating func release() {
        pendingRequest = nil
        phase = .draining
    }

    /// The next held event to handle; nil when none is left (the gate then opens, or waits
    /// again for a request made while draining).
    mutating func next() -> Event? {
        guard phase == .draining else { return nil }
        guard !held.isEmpty else {
            phase = pendingRequest == nil ? .open : .waiting
            return nil
        }
        return held.removeFirst()
    }

    /// The connection is closed: the held events are dropped and the gate opens.
    mutating func reset() {
        held = []
        pendingRequest = nil
        phase = .open
    }
}
