import IPCProtocol
import VoiceMediaProtocol

/// The room the viewer asked for (`voice.join`) and how far the daemon got in it.
struct VoiceRoomProgress: Sendable, Equatable {
    /// Where the room stands on the server.
    enum Step: Sendable, Equatable {
        /// Waiting for a handle and the media process's pipeline; nothing of the room is sent.
        case waiting
        /// `exists`, `create` or `join` is on its way.
        case checking, creating, joining
        /// In the room (Janus said `joined`).
        case joined
        /// In the room again after a claimed session: its list is read again (`listparticipants`).
        case relisting
    }

    let name: String
    let janusID: JanusRoomID
    /// Tells this room's replies from those of a room before it.
    let generation: Int
    let display: String
    /// A secret: only ever written into `join`.
    let pin: String?
    var muted: Bool
    var state: VoiceState = .connecting
    var step: Step = .waiting
    /// This box's id in the room, from `joined`.
    var selfId: String?
    var roster = VoiceRoster()
    /// Whether the room was joined at least once: a lost server is then retried, not an error.
    var everJoined = false
    /// What the server was last told of `muted` (in `join` or `configure`); nil before `join`.
    var serverMuted: Bool?
    var error: RPCError?
    var reason: VoiceStateReason?

    /// In the room on the server (its events apply).
    var isIn: Bool { step == .joined || step == .relisting }
}

/// The signalling link: the WebSocket, the Janus session on it and the AudioBridge handle.
struct VoiceLink: Sendable, Equatable {
    enum Socket: Sendable, Equatable {
        case closed
        case opening(VoiceSocketID)
        case open(VoiceSocketID)
        /// Lost; the `reconnect` timer opens the next one.
        case waiting
    }

    enum Session: Sendable, Equatable {
        case none
        /// `info` sent (for the session timeout), then `create`.
        case asking, creating
        /// `claim` of a session lost with the previous WebSocket.
        case claiming(UInt64)
        case ready(UInt64)
    }

    enum Handle: Sendable, Equatable {
        case none
        case attaching
        case attached(UInt64)
    }

    var socket: Socket = .closed
    var session: Session = .none
    /// The session the last WebSocket had, to claim on the next one.
    var lost: UInt64?
    /// The handle of the current (or lost) session.
    var handle: Handle = .none
    var keepaliveEvery: Duration = VoiceCore.longestKeepalive
    /// Connection attempts made for this link.
    var attempts = 0

    var openSocket: VoiceSocketID? {
        if case .open(let socket) = socket { return socket }
        return nil
    }

    var readySession: UInt64? {
        if case .ready(let session) = session { return session }
        return nil
    }

    var attachedHandle: UInt64? {
        if case .attached(let handle) = handle { return handle }
        return nil
    }
}

/// The media process of the current join and the negotiation it takes part in.
struct VoiceMediaProgress: Sendable, Equatable {
    enum Step: Sendable, Equatable {
        /// `startMedia` asked; `mediaStarted` not yet told.
        case spawning
        /// `start` sent; waiting for `ready`.
        case starting
        /// The pipeline plays.
        case ready
    }

    /// The most candidates held back each way.
    static let heldCandidates = 64

    let id: VoiceMediaID
    var step: Step = .spawning
    /// The local offer, until `configure` takes it.
    var offer: String?
    var offerSent = false
    /// Janus' answer was given to the process.
    var answered = false
    /// Local candidates held until the offer is sent, remote ones until the answer is given.
    var localCandidates: [TrickledCandidate] = []
    var remoteCandidates: [TrickledCandidate] = []
    /// Whether this box's microphone is talking (the process measures it).
    var talking = false

    /// The negotiation is not half-way: no offer sent yet, or its answer taken.
    var isSettled: Bool { !offerSent || answered }
}

/// Which request a transaction is, and for which room and handle.
enum JanusPurpose: Sendable, Equatable {
    case info, create, attach, keepalive
    case claim(UInt64)
    case exists(RoomRequest)
    case createRoom(RoomRequest)
    case join(RoomRequest)
    /// With the local offer, or only `muted`.
    case configure(RoomRequest, offer: Bool)
    case listParticipants(RoomRequest)

    struct RoomRequest: Sendable, Equatable {
        let generation: Int
        let handle: UInt64
    }

    /// Whether the reply comes as a later event (kept across a claimed session).
    var isAsynchronous: Bool {
        switch self {
        case .join, .configure: return true
        default: return false
        }
    }

    var room: RoomRequest? {
        switch self {
        case .exists(let request), .createRoom(let request), .join(let request), .configure(let request, _),
             .listParticipants(let request):
            return request
        case .info, .create, .attach, .keepalive, .claim:
            return nil
        }
    }
}
