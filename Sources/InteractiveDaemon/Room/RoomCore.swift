import IPCProtocol
import JSONValue

/// What the live connection reports, as the room core takes it (from `SocketIOConnectionState`).
enum BackendLinkEvent: Sendable, Equatable {
    case connecting(attempt: Int)
    case connected(socketId: String)
    case reconnecting(attempt: Int, retryIn: Duration, error: String)
    /// The backend refused the connection; no retry until told.
    case refused(error: String)
    /// The connection ended for good; `byClient`: closed on purpose.
    case disconnected(error: String, byClient: Bool)
}

/// What the room core asks its shell (`RoomController`) to do, in order.
enum RoomEffect: Sendable, Equatable {
    /// The room changed: publish `room.state` when `changed`, update the overlays' context, and
    /// wake `room.join` callers unless it is still joining.
    case room(Room, changed: Bool)
    /// Publish `connection.state`.
    case connection(ConnectionStateEvent)
    /// Update the overlays' context (the socket id changed).
    case context
    /// Tracking's acks go over the connection (true) or wait (false).
    case transport(connected: Bool)
    /// Send join-room on the connection now up.
    case sendJoin
    case log(RoomLogLine)
}

/// The room and its live connection as a pure state machine: the room's states (none → joining
/// → joined → left or error) and how the backend connection's states move it (a lost connection
/// takes a joined room back to joining; a refusal or an end is the room's error), join-room's
/// ack, and how an outage is logged (once). Entering and leaving (`entry`, `leaving`) are
/// decided here too; the shell performs them (connections, the scenario, the other managers).
struct RoomCore: Sendable {
    private(set) var room: Room?
    /// The connection's socket id while connected.
    private(set) var socketId: String?
    /// Whether the current connection was up at least once (later attempts are reconnections).
    private(set) var everConnected = false
    /// The connection on which join-room was last sent for the current room.
    private(set) var joinSentOnSocket: String?
    private(set) var outage = BackendOutage()
    /// The media whose server room the backend's events on this connection belong to (nil: none
    /// yet). The server sends in order on one connection, so after a `leave-room` what arrives
    /// before the next room's `join-room` ack is the old room's (`eventsRoom` stays on it);
    /// on a new connection the socket is in no other room.
    private(set) var eventsRoom: String?
    /// `leave-room` was sent on this connection and the next room's `join-room` ack is awaited.
    private var awaitingJoinAfterLeave = false

    // MARK: The room

    /// The room becomes `updated`.
    mutating func set(_ updated: Room, into effects: inout [RoomEffect]) {
        let changed = room?.state != updated.state || room?.mediaId != updated.mediaId || room?.fanclub != updated.fanclub
            || room?.error != updated.error
        room = updated
        if updated.mode == .live, updated.isActive, socketId != nil, !awaitingJoinAfterLeave { eventsRoom = updated.mediaId }
        effects.append(.room(updated, changed: changed))
    }

    /// How `room.join` (or a restore) enters a room.
    enum Entry: Equatable {
        /// Mode not configured: these keys are missing.
        case notConfigured([String])
        /// The room is already this one: only `fanclub` changed (nil: nothing did).
        case stay(Room?)
        /// Leave `leaving` (when active) first, then join `fresh`.
        case enter(fresh: Room, leaving: Room?)
    }

    /// Decides how to enter `mediaId` in `mode` with `missing` configuration keys.
    func entry(mediaId: String, mode: RoomMode, fanclub: Bool, missing: [String]) -> Entry {
        guard missing.isEmpty else { return .notConfigured(missing) }
        if var current = room, current.mediaId == mediaId, current.mode == mode, current.isActive {
            guard current.fanclub != fanclub else { return .stay(nil) }
            current.fanclub = fanclub
            return .stay(current)
        }
        let leaving = room.flatMap { $0.isActive ? $0 : nil }
        return .enter(fresh: Room(mediaId: mediaId, mode: mode, fanclub: fanclub, state: .joining, error: nil), leaving: leaving)
    }

    /// The room `room.leave` leaves: any not left yet (one in error too: a new login or
    /// configuration change would otherwise revive it); nil when there is none.
    var leaving: Room? {
        guard let room, room.state != .left else { return nil }
        return room
    }

    /// The room after it was left.
    static func left(_ room: Room) -> Room {
        var left = room
        left.state = .left
        left.error = nil
        return left
    }

    /// The VOD scenario of `mediaId` loaded (`timelines`: how many) or failed: the room is
    /// joined or in error, unless it changed meanwhile. Returns whether the scenario is taken.
    mutating func scenarioLoaded(mediaId: String, _ outcome: Result<Int, RPCError>, into effects: inout [RoomEffect]) -> Bool {
        guard var latest = room, latest.mediaId == mediaId, latest.mode == .vod, latest.state == .joining else { return false }
        switch outcome {
        case .success(let timelines):
            latest.state = .joined
            effects.append(.log(.vodJoined(mediaId: mediaId, timelines: timelines)))
        case .failure(let error):
            effects.append(.log(.scenarioUnavailable(mediaId: mediaId, message: error.message)))
            latest.state = .error
            latest.error = error
        }
        set(latest, into: &effects)
        return latest.state == .joined
    }

    /// At start: the room kept from the previous run (nil: none) is taken as the room being
    /// joined, unless a room is already set or its mode lacks configuration (`missing`).
    mutating func restore(_ kept: Room?, missing: [String], into effects: inout [RoomEffect]) {
        guard let kept, room == nil else { return }
        guard missing.isEmpty else {
            effects.append(.log(.cannotRejoin(kept, missing: missing)))
            return
        }
        effects.append(.log(.rejoining(kept)))
        set(Room(mediaId: kept.mediaId, mode: kept.mode, fanclub: kept.fanclub, state: .joining, error: nil), into: &effects)
    }

    // MARK: The live connection

    /// A new connection replaces the old one, or none is left: nothing of it is known.
    mutating func connectionClosed() {
        socketId = nil
        everConnected = false
        joinSentOnSocket = nil
        eventsRoom = nil
        awaitingJoinAfterLeave = false
        outage.reset()
    }

    /// The connection will be made again (new credentials): join-room goes again on it.
    mutating func rejoinNeeded() { joinSentOnSocket = nil }

    /// `leave-room` of `mediaId` was sent on the connection, which carries the next live room:
    /// until that room's `join-room` is acknowledged, what the server sends is the old room's.
    mutating func leftOnConnection(_ mediaId: String) {
        joinSentOnSocket = nil
        guard socketId != nil else { return }
        eventsRoom = mediaId
        awaitingJoinAfterLeave = true
    }

    /// The room a backend event arriving now belongs to (nil: none, it is dropped).
    var arrivalRoom: RoomKey? { eventsRoom.map { RoomKey(mediaId: $0, mode: .live) } }

    /// What the live connection reports at `now`.
    mutating func link(_ event: BackendLinkEvent, now: ContinuousClock.Instant) -> [RoomEffect] {
        var effects: [RoomEffect] = []
        switch event {
        case .connecting(let attempt):
            // After a connection was up, a new attempt means it was lost (an immediate retry
            // skips the reconnecting state).
            let wasConnected = socketId != nil
            if wasConnected {
                lost(into: &effects)
                effects.append(.log(.failure(outage.lost(at: now), reason: "connection lost", attempt: attempt, retryIn: .zero,
                                             everConnected: everConnected)))
            }
            effects.append(.connection(ConnectionStateEvent(
                state: wasConnected || everConnected ? "reconnecting" : "connecting", attempt: attempt, retryInMs: 0,
                error: wasConnected ? "connection lost" : nil)))
        case .connected(let id):
            socketId = id
            everConnected = true
            // A new connection is in no server room yet: the backend's events on it are the
            // current room's (join-room follows at once).
            awaitingJoinAfterLeave = false
            eventsRoom = room.flatMap { $0.mode == .live && $0.isActive ? $0.mediaId : nil }
            let ended = outage.connected(at: now)
            effects.append(.log(.connected(socketId: id, outage: ended?.duration, failedAttempts: ended?.failures ?? 0)))
            effects.append(.connection(ConnectionStateEvent(state: "connected", socketId: id)))
            effects.append(.context)
            effects.append(.transport(connected: true))
            effects.append(.sendJoin)
        case .reconnecting(let attempt, let retryIn, let error):
            lost(into: &effects)
            effects.append(.log(.failure(outage.attemptFailed(at: now), reason: error, attempt: attempt, retryIn: retryIn,
                                         everConnected: everConnected)))
            effects.append(.connection(ConnectionStateEvent(state: "reconnecting", attempt: attempt,
                                                            retryInMs: Int(truncatingIfNeeded: BackendOutage.milliseconds(retryIn)),
                                                            error: PeerText.clipped(error))))
        case .refused(let error):
            lost(into: &effects)
            outage.reset()
            effects.append(.log(.refused(error)))
            effects.append(.connection(ConnectionStateEvent(state: "disconnected", error: PeerText.clipped(error))))
            fail(.daemon(.backendRefused, "the backend refused the connection: \(error)"), into: &effects)
        case .disconnected(let error, let byClient):
            lost(into: &effects)
            outage.reset()
            guard !byClient else { break }
            effects.append(.log(.ended(error)))
            effects.append(.connection(ConnectionStateEvent(state: "disconnected", error: PeerText.clipped(error))))
            fail(.daemon(.backendUnreachable, "the backend ended the connection: \(error)"), into: &effects)
        }
        return effects
    }

    /// Whether join-room is to be sent now: a live room being joined, on a connection that is
    /// up and has not had it. Returns the socket id it is sent on.
    mutating func joinToSend() -> String? {
        guard let socketId, let room, room.mode == .live, room.isActive, joinSentOnSocket != socketId else { return nil }
        joinSentOnSocket = socketId
        return socketId
    }

    /// join-room's ack came (or its time ran out: `acked` false) on `socketId` for `mediaId`:
    /// the room is joined, unless the connection or the room changed meanwhile.
    mutating func joinAcknowledged(mediaId: String, socketId: String, acked: Bool) -> [RoomEffect] {
        guard self.socketId == socketId, var current = room, current.mediaId == mediaId, current.mode == .live,
              current.state == .joining else { return [] }
        // From the ack on, the server's events are the new room's.
        awaitingJoinAfterLeave = false
        eventsRoom = mediaId
        var effects: [RoomEffect] = []
        if !acked { effects.append(.log(.joinNotAcked(mediaId: mediaId))) }
        current.state = .joined
        current.error = nil
        set(current, into: &effects)
        effects.append(.log(.joined(mediaId: mediaId)))
        return effects
    }

    /// The connection is gone: a joined room goes back to joining; overlays stay.
    private mutating func lost(into effects: inout [RoomEffect]) {
        effects.append(.transport(connected: false))
        socketId = nil
        joinSentOnSocket = nil
        eventsRoom = nil
        awaitingJoinAfterLeave = false
        effects.append(.context)
        if var current = room, current.mode == .live, current.state == .joined {
            current.state = .joining
            set(current, into: &effects)
        }
    }

    private mutating func fail(_ error: RPCError, into effects: inout [RoomEffect]) {
        guard var current = room, current.mode == .live, current.isActive else { return }
        current.state = .error
        current.error = error
        set(current, into: &effects)
    }
}
