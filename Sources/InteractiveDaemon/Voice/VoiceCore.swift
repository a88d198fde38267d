import IPCProtocol
import JSONValue
import SocketIO

/// The voice room of seed 002 as a pure state machine: inputs and the current time in, effects
/// out (`VoiceCoreIO.swift`). It holds the room the viewer asked for, the signalling with the
/// voice server (Janus' WebSocket API: session, keepalives, claim, the AudioBridge handle), the
/// participants, and the life of the media process that carries the audio; the shell performs
/// the effects on the event loop and reads `status` for `daemon.status`.
///
/// A join runs: the media process starts while the WebSocket opens and a session (`info` for its
/// timeout, `create`) and a handle (`attach`) are made; once the pipeline plays, `exists` →
/// `create` (when `voiceCreateRooms`) → `join` → the process's offer goes with `configure` and
/// Janus' answer comes back to it; candidates trickle both ways. A lost WebSocket is reopened
/// with the backend's backoff and its session claimed, then the list read again; a session that
/// is gone means a new session and a new join, as does a media process that dies (at most
/// `VoiceRestartBudget.limit` times a minute). Refusals are never retried.
///
/// The transitions live in `VoiceCore+Signalling.swift` (link and session), `VoiceCore+Room.swift`
/// (the room on the server) and `VoiceCore+Media.swift` (the media process); the stored state
/// below is changed only by them.
struct VoiceCore: Sendable {
    /// The WebSocket subprotocol of Janus' API.
    static let subprotocol = "janus-protocol"
    /// Keepalives go at least this often, and at least three times per session timeout.
    static let longestKeepalive: Duration = .seconds(15)
    /// The display name when neither `display` nor the viewer's name is known.
    static let defaultDisplay = "Viewer"

    var settings: VoiceSettings
    var viewerDisplayName: String?
    /// The room asked for last; nil before the first `voice.join`.
    var room: VoiceRoomProgress?
    var link = VoiceLink()
    var media: VoiceMediaProgress?
    var restarts = VoiceRestartBudget()
    /// `voice.join` requests waiting for the room, with the generation of the room they asked for.
    var waitingJoins: [(request: VoiceRequestID, generation: Int)] = []
    var transactions: [String: JanusPurpose] = [:]
    var backoff: ReconnectBackoff<ContinuousClock.Instant>
    var outage = BackendOutage()
    var random: any RandomNumberGenerator & Sendable
    /// The last `voice.state` published.
    var published: VoiceStateEvent?
    var lastTransaction = 0
    var lastSocket = 0
    var lastMedia = 0
    var lastGeneration = 0

    /// `random` draws the reconnection jitter.
    init(settings: VoiceSettings, random: some RandomNumberGenerator & Sendable) {
        self.settings = settings
        self.random = random
        backoff = ReconnectBackoff(policy: settings.reconnect)
    }

    /// Takes one input at `now`; returns what to do, in order.
    mutating func handle(_ input: VoiceInput, now: ContinuousClock.Instant) -> [VoiceEffect] {
        var effects: [VoiceEffect] = []
        switch input {
        case .join(let params, let request): join(params, request, now: now, into: &effects)
        case .leave(let request): leave(request, into: &effects)
        case .mute(let muted, let request): mute(muted, request, now: now, into: &effects)
        case .settings(let settings): self.settings = settings
        case .viewerDisplayName(let name): viewerDisplayName = name
        case .socketOpened(let socket): socketOpened(socket, now: now, into: &effects)
        case .socketClosed(let socket, let reason): socketClosed(socket, reason: reason, now: now, into: &effects)
        case .janusReceived(let socket, let text): received(text, on: socket, now: now, into: &effects)
        case .mediaStarted(let id): mediaStarted(id, into: &effects)
        case .media(let id, let event): media(event, from: id, now: now, into: &effects)
        case .mediaExited(let id, let exit): mediaExited(id, exit, now: now, into: &effects)
        case .timerFired(let timer): timerFired(timer, now: now, into: &effects)
        }
        return effects
    }

    /// `daemon.status`'s `voice`: the room and its participants (this box first), nil before the
    /// first `voice.join`.
    var status: VoiceStatus? {
        guard let room else { return nil }
        var participants: [VoiceParticipant] = []
        if let selfId = room.selfId, room.state.isActive {
            participants.append(VoiceParticipant(peerId: selfId, display: room.display, muted: room.muted,
                                                 talking: selfTalking))
            participants += room.roster.peers
        }
        return VoiceStatus(room: room.name, state: room.state, selfId: room.state.isActive ? room.selfId : nil, muted: room.muted,
                           participants: participants, error: room.error.map(Self.failure))
    }

    /// Whether this box is talking: its microphone says so and it is not muted.
    var selfTalking: Bool { media?.talking == true && room?.muted == false }

    // MARK: Requests

    private mutating func join(_ params: VoiceJoinParams, _ request: VoiceRequestID, now: ContinuousClock.Instant,
                               into effects: inout [VoiceEffect]) {
        let missing = settings.missing
        guard missing.isEmpty else {
            effects.append(.reply(request, .failure(.daemon(.notConfigured, "voice rooms need the voice server's address (voiceUrl)",
                                                            extra: ["missing": .array(missing.map(JSONValue.string))]))))
            return
        }
        if let current = room, current.state.isActive, current.name == params.room {
            // The same room: a no-op, except that a changed `muted` is applied.
            if current.muted != params.muted { applyMute(params.muted, now: now, into: &effects) }
            wait(request, timeoutMs: params.effectiveTimeoutMs, now: now, into: &effects)
            return
        }
        if room?.state.isActive == true {
            end(as: .left, reason: .replaced, error: nil, keepLink: true, into: &effects)
        }
        lastGeneration += 1
        let display = params.display ?? viewerDisplayName.map { String($0.prefix(VoiceJoinParams.maxNameLength)) } ?? Self.defaultDisplay
        room = VoiceRoomProgress(name: params.room, janusID: JanusRoomID(room: params.room), generation: lastGeneration,
                                 display: display, pin: params.pin, muted: params.muted)
        restarts = VoiceRestartBudget()
        publishState(into: &effects)
        advance(now: now, into: &effects)
        wait(request, timeoutMs: params.effectiveTimeoutMs, now: now, into: &effects)
    }

    private mutating func leave(_ request: VoiceRequestID, into effects: inout [VoiceEffect]) {
        guard let current = room, current.state.isActive else {
            effects.append(.reply(request, .failure(Self.noVoiceRoom)))
            return
        }
        end(as: .left, reason: .left, error: nil, keepLink: false, into: &effects)
        effects.append(.reply(request, .success(VoiceLeaveResult(room: current.name).json)))
    }

    private mutating func mute(_ muted: Bool, _ request: VoiceRequestID, now: ContinuousClock.Instant,
                               into effects: inout [VoiceEffect]) {
        guard let current = room, current.state.isActive else {
            effects.append(.reply(request, .failure(Self.noVoiceRoom)))
            return
        }
        if current.muted != muted { applyMute(muted, now: now, into: &effects) }
        effects.append(.reply(request, .success(VoiceMuteResult(room: current.name, muted: muted).json)))
    }

    /// Muted: the valve closes at once and the server is told (others see it); unmuted: both undone.
    private mutating func applyMute(_ muted: Bool, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        let wasTalking = selfTalking
        room?.muted = muted
        if let media, media.step != .spawning { effects.append(.sendMedia(media.id, .mute(muted))) }
        publishSelfTalking(wasTalking: wasTalking, into: &effects)
        publishState(into: &effects)
        advance(now: now, into: &effects)
    }

    private static let noVoiceRoom = RPCError.daemon(.noRoom, "no voice room: call voice.join first")

    // MARK: Waiting joins

    /// `request` is answered when the room is joined, fails, or after `timeoutMs`.
    private mutating func wait(_ request: VoiceRequestID, timeoutMs: Int, now: ContinuousClock.Instant,
                               into effects: inout [VoiceEffect]) {
        guard let room else { return }
        guard room.state == .connecting || room.state == .reconnecting, timeoutMs > 0 else {
            effects.append(.reply(request, statusReply))
            return
        }
        waitingJoins.append((request, room.generation))
        effects.append(.schedule(.joinReply(request), at: now + .milliseconds(timeoutMs)))
    }

    /// The status as a `voice.join` result.
    var statusReply: Result<JSONValue, RPCError> {
        guard let status else { return .failure(Self.noVoiceRoom) }
        return .success(status.json)
    }

    /// Answers every waiting `voice.join` with `result` (the status when nil).
    mutating func answerWaitingJoins(_ result: Result<JSONValue, RPCError>? = nil, into effects: inout [VoiceEffect]) {
        for waiting in waitingJoins {
            effects.append(.cancel(.joinReply(waiting.request)))
            effects.append(.reply(waiting.request, result ?? statusReply))
        }
        waitingJoins.removeAll()
    }

    private mutating func timerFired(_ timer: VoiceTimer, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        switch timer {
        case .joinReply(let request):
            // `timeoutMs` passed: the reply says where the room is (connecting); the daemon keeps trying.
            guard let index = waitingJoins.firstIndex(where: { $0.request == request }) else { return }
            waitingJoins.remove(at: index)
            effects.append(.reply(request, statusReply))
        case .reconnect:
            reconnectDue(now: now, into: &effects)
        case .keepalive:
            keepaliveDue(now: now, into: &effects)
        }
    }

    // MARK: Ending a room

    /// The room ends `state` (`left`, `closed` or `error`): the server is left, the media process
    /// stopped, the waiting joins answered. With `keepLink` (another room follows) a ready session
    /// stays for the next room; otherwise the session is destroyed and the WebSocket closed.
    mutating func end(as state: VoiceState, reason: VoiceStateReason?, error: RPCError?, keepLink: Bool,
                      into effects: inout [VoiceEffect]) {
        guard var ended = room else { return }
        if let socket = link.openSocket, let session = link.readySession, let handle = link.attachedHandle {
            if ended.isIn { send(.message(session: session, handle: handle, .leave, offer: nil), on: socket, into: &effects) }
            if keepLink { send(.detach(session: session, handle: handle), on: socket, into: &effects) }
        }
        if keepLink, link.openSocket != nil, link.readySession != nil {
            link.handle = .none
            transactions = transactions.filter { $0.value.room == nil }
        } else {
            closeLink(into: &effects)
        }
        stopMedia(into: &effects)
        ended.state = state
        ended.reason = reason
        ended.error = error
        ended.step = .waiting
        ended.selfId = nil
        ended.roster.removeAll()
        room = ended
        if let reason, state != .error { effects.append(.log(.left(room: ended.name, reason))) }
        publishState(into: &effects)
        answerWaitingJoins(error.map { .failure($0) }, into: &effects)
    }

    /// The room fails with `error`; nothing is retried.
    mutating func fail(_ error: RPCError, into effects: inout [VoiceEffect]) {
        guard room?.state.isActive == true else { return }
        end(as: .error, reason: nil, error: error, keepLink: false, into: &effects)
    }

    // MARK: Publishing

    /// Publishes `voice.state` when what it says (but the participant count) changed.
    mutating func publishState(into effects: inout [VoiceEffect]) {
        guard let room, let status else { return }
        let event = VoiceStateEvent(room: room.name, state: room.state, selfId: status.selfId, muted: room.muted,
                                    participants: status.participants.count, error: status.error,
                                    reason: room.state == .left || room.state == .closed ? room.reason : nil)
        if let published, published.room == event.room, published.state == event.state, published.selfId == event.selfId,
           published.muted == event.muted, published.error == event.error, published.reason == event.reason {
            return
        }
        published = event
        effects.append(.state(event))
    }

    /// Publishes what changed among the other participants.
    mutating func publish(_ changes: [VoiceRoster.Change], into effects: inout [VoiceEffect]) {
        guard let room else { return }
        for change in changes {
            switch change {
            case .joined(let peer):
                effects.append(.peer(VoicePeerEvent(room: room.name, peerId: peer.peerId, display: peer.display, event: .joined,
                                                    muted: peer.muted)))
            case .updated(let peer):
                effects.append(.peer(VoicePeerEvent(room: room.name, peerId: peer.peerId, display: peer.display, event: .updated,
                                                    muted: peer.muted)))
            case .left(let peer, let reason):
                effects.append(.peer(VoicePeerEvent(room: room.name, peerId: peer.peerId, display: peer.display, event: .left,
                                                    muted: peer.muted, reason: reason)))
                if peer.talking { effects.append(.talking(VoiceTalkingEvent(room: room.name, peerId: peer.peerId, talking: false))) }
            case .talking(let peer):
                effects.append(.talking(VoiceTalkingEvent(room: room.name, peerId: peer.peerId, talking: peer.talking)))
            }
        }
    }

    /// Publishes `voice.talking` for this box when it changed (in the room only).
    mutating func publishSelfTalking(wasTalking: Bool, into effects: inout [VoiceEffect]) {
        guard let room, room.state == .joined, let selfId = room.selfId, selfTalking != wasTalking else { return }
        effects.append(.talking(VoiceTalkingEvent(room: room.name, peerId: selfId, talking: selfTalking)))
    }

    static func failure(_ error: RPCError) -> RoomStateEvent.Failure {
        RoomStateEvent.Failure(name: error.name, message: PeerText.clipped(error.message))
    }
}
