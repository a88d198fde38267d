import IPCProtocol

/// How important a voice log line is (the journal's priorities the daemon uses).
enum VoiceLogPriority: Sendable, Equatable {
    case debug, info, notice, warning, error
}

/// A log line the voice core asks for. None holds a secret: no pin, API secret, token or SDP,
/// and the server's address is its host alone (a URL may carry credentials).
enum VoiceLogLine: Sendable, Equatable {
    /// The first connection attempt for a room.
    case connecting(host: String)
    /// The server could not be reached for a room never joined: the join failed.
    case unreachable(room: String, reason: String)
    /// The connection was lost (an outage begins: warning) or an attempt during it failed (debug).
    case connectionLost(reason: String, BackendOutage.FailureLog, retryIn: Duration)
    /// The connection is back after an outage of this long.
    case connectionBack(outage: Duration, failedAttempts: Int)
    case sessionCreated(session: UInt64, keepalive: Duration)
    case sessionClaimed(session: UInt64)
    /// The session is gone on the server; a new one is made and the room joined again.
    case sessionLost(reason: String)
    case joined(room: String, selfId: String, others: Int, again: Bool)
    case left(room: String, VoiceStateReason)
    /// The server refused; nothing is retried.
    case refused(room: String, reason: String)
    case noRoom(room: String)
    case mediaUnavailable(reason: String)
    /// The media failed (`what`); the room is joined again (restart `restart` of `VoiceRestartBudget.limit`).
    case mediaFailed(what: String, restart: Int)
    /// The media failed once more than the budget allows: the room goes `error`.
    case mediaGaveUp(room: String, what: String)
    /// The media process's own error message.
    case mediaError(String)
    case mediaUp
    /// Whether the server receives this box's audio (Janus' `media`).
    case serverReceives(Bool)
    case mediaState(ice: String)
    /// A message that was not used, and why.
    case ignored(String)
    /// A participant list or event beyond `VoiceRoster.limit` entries.
    case participantsLeftOut(room: String, count: Int)

    var priority: VoiceLogPriority {
        switch self {
        case .connecting, .sessionCreated, .mediaUp: return .info
        case .connectionLost(_, .outageBegins, _), .sessionLost, .noRoom, .mediaFailed, .mediaError, .participantsLeftOut: return .warning
        case .connectionLost, .serverReceives, .mediaState, .ignored: return .debug
        case .connectionBack, .sessionClaimed, .joined, .left: return .notice
        case .unreachable, .refused, .mediaUnavailable, .mediaGaveUp: return .error
        }
    }

    var message: String {
        switch self {
        case .connecting(let host): return "Connecting to the voice server \(host)"
        case .unreachable(let room, let reason): return "Voice room \(room) not joined: the voice server cannot be reached (\(reason))"
        case .connectionLost(let reason, .outageBegins, let delay):
            return "Voice server connection lost: \(reason); reconnecting in \(BackendOutage.seconds(delay)) (later attempts are logged at debug level)"
        case .connectionLost(let reason, .stillOut(let failures), let delay):
            return "Voice server still unreachable after \(failures) failed attempts: \(reason); next attempt in \(BackendOutage.seconds(delay))"
        case .connectionBack(let outage, let failures):
            return "Voice server connection back after \(BackendOutage.seconds(outage)) (\(failures) failed attempts)"
        case .sessionCreated(let session, let keepalive):
            return "Voice session \(session) created; keepalive every \(BackendOutage.seconds(keepalive))"
        case .sessionClaimed(let session): return "Voice session \(session) claimed on the new connection"
        case .sessionLost(let reason): return "Voice session lost (\(reason)); making a new one and joining again"
        case .joined(let room, let selfId, let others, let again):
            return "Voice room \(room) joined\(again ? " again" : "") as \(selfId) with \(others) other participants"
        case .left(let room, let reason):
            switch reason {
            case .left: return "Voice room \(room) left"
            case .kicked: return "Voice room \(room): this box was kicked"
            case .replaced: return "Voice room \(room) left for another room"
            case .destroyed: return "Voice room \(room) closed: the server destroyed it"
            }
        case .refused(let room, let reason): return "The voice server refused room \(room): \(reason); not retried"
        case .noRoom(let room): return "Voice room \(room) does not exist and voiceCreateRooms is false"
        case .mediaUnavailable(let reason): return "Voice media unavailable: \(reason)"
        case .mediaFailed(let what, let restart):
            return "Voice media failed (\(what)); joining the room again (restart \(restart) of \(VoiceRestartBudget.limit) a minute)"
        case .mediaGaveUp(let room, let what):
            return "Voice room \(room) given up: the media failed again (\(what)), more than \(VoiceRestartBudget.limit) times a minute"
        case .mediaError(let message): return "The voice media process reported: \(message)"
        case .mediaUp: return "Voice media connected to the server"
        case .serverReceives(let receiving): return "The voice server \(receiving ? "receives" : "no longer receives") this box's audio"
        case .mediaState(let ice): return "Voice media ICE state: \(ice)"
        case .ignored(let what): return "Voice: ignored \(what)"
        case .participantsLeftOut(let room, let count):
            return "Voice room \(room): \(count) participants left out of the list (at most \(VoiceRoster.limit) are kept)"
        }
    }
}
