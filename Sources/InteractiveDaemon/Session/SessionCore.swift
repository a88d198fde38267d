/// What a session change asks the room's shell (`RoomController`) to do, in order. The session
/// is the core's as it is when the effect is performed: when two changes interleave (the shell
/// awaits the store and the bus), what is kept and told last is the latest session.
enum SessionEffect: Sendable, Equatable {
    case log(SessionLogLine)
    /// Keep `SessionCore.kept` in the store for a restart (nil: forget the kept session).
    case keep
    /// Publish `session.state` and give the overlays the room's context with the viewer.
    case publish
    /// Tell playback: prefetched play tickets belong to one viewer.
    case playback
    /// Make the live room's connection again, so that it carries the new token.
    case reconnectLive(reason: String)
    /// Publish `login.required` with reason `expired`.
    case loginRequired
}

/// A log line the session core asks for (info). User ids only: never a token.
enum SessionLogLine: Sendable, Equatable {
    case loggedIn(userId: String)
    /// `userId`: the viewer who was logged in, nil if nobody was.
    case loggedOut(userId: String?)
    case restored(userId: String?)
    /// `source`: what refused the token (a REST call, the live connection).
    case expired(userId: String?, source: String)
}

/// The viewer's session as a pure state machine: login, logout and the session kept from the
/// previous run, and what each does to the store, the players, playback and the live room.
struct SessionCore: Sendable {
    private(set) var session = ViewerSession.anonymous

    /// What the store keeps of the session: a logged-in viewer; nil (forget it) when anonymous.
    var kept: ViewerSession? { session.isLoggedIn ? session : nil }

    /// `session.login` while `room` is the room (nil: none).
    mutating func login(token: String, userId: String, displayName: String?, room: Room?) -> [SessionEffect] {
        session = ViewerSession(token: token, userId: userId, displayName: displayName)
        return [.log(.loggedIn(userId: userId))] + changed(room: room)
    }

    /// `session.logout`: back to an anonymous viewer.
    mutating func logout(room: Room?) -> [SessionEffect] {
        let previous = session.userId
        session = .anonymous
        return [.log(.loggedOut(userId: previous))] + changed(room: room)
    }

    /// At start: the session kept from the previous run (nil: none) is taken, unless a room is
    /// set or a viewer logged in already (a client's login or leave is not undone by it). It is
    /// in the store already: nothing is kept, and the live room (none yet) is not touched.
    mutating func restore(_ kept: ViewerSession?, room: Room?) -> [SessionEffect] {
        guard let kept, room == nil, !session.isLoggedIn else { return [] }
        session = kept
        return [.log(.restored(userId: kept.userId)), .publish, .playback]
    }

    /// The backend refused `token` (a 401 or 403 from a REST call, or a refused CONNECT): the
    /// session is expired, said once per expiry (`session.state`, `login.required`). A token
    /// that is no longer the viewer's (a later login took its place) changes nothing, and nothing
    /// retries: the viewer logs in again (`session.login` clears the expiry).
    mutating func refused(token: String, source: String) -> [SessionEffect] {
        guard session.token == token, !session.expired else { return [] }
        session.expired = true
        return [.log(.expired(userId: session.userId, source: source)), .publish, .loginRequired]
    }

    /// A login or logout: kept (or forgotten), told, and a live room not left reconnects with
    /// the new credentials (a room in error too: the new token may be what it lacked).
    private func changed(room: Room?) -> [SessionEffect] {
        var effects: [SessionEffect] = [.keep, .publish, .playback]
        if let room, room.mode == .live, room.state != .left { effects.append(.reconnectLive(reason: "new login")) }
        return effects
    }
}
