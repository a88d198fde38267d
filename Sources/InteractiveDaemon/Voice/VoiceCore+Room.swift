import IPCProtocol
import JSONValue

/// The room on the server: `exists` → `create` → `join` → `configure` with the offer, the
/// participants kept from the AudioBridge's events, the list read again after a claimed session,
/// and joining again on a fresh handle when the room was lost.
extension VoiceCore {
    /// The room's next request on an attached handle, if none is on its way.
    mutating func advanceRoom(socket: VoiceSocketID, session: UInt64, handle: UInt64, into effects: inout [VoiceEffect]) {
        guard var room, var media else { return }
        let request = JanusPurpose.RoomRequest(generation: room.generation, handle: handle)
        switch room.step {
        case .waiting:
            // Nothing of the room goes out before the media process said its pipeline plays.
            guard media.step == .ready else { return }
            room.step = .checking
            self.room = room
            send(.message(session: session, handle: handle, .exists(room.janusID), offer: nil), on: socket,
                 purpose: .exists(request), into: &effects)
        case .joined:
            if let offer = media.offer, !media.offerSent {
                media.offer = nil
                media.offerSent = true
                room.serverMuted = room.muted
                let held = media.localCandidates
                media.localCandidates.removeAll()
                self.room = room
                self.media = media
                send(.message(session: session, handle: handle, .configure(muted: room.muted), offer: offer), on: socket,
                     purpose: .configure(request, offer: true), into: &effects)
                for candidate in held { trickle(candidate, on: socket, session: session, handle: handle, into: &effects) }
            } else if room.serverMuted != room.muted, media.offer == nil || media.offerSent {
                room.serverMuted = room.muted
                self.room = room
                send(.message(session: session, handle: handle, .configure(muted: room.muted), offer: nil), on: socket,
                     purpose: .configure(request, offer: false), into: &effects)
            }
        case .checking, .creating, .joining, .relisting:
            return
        }
    }

    /// Sends `join` on the current handle.
    private mutating func sendJoin(into effects: inout [VoiceEffect]) {
        guard var room, let socket = link.openSocket, let session = link.readySession, let handle = link.attachedHandle else { return }
        room.step = .joining
        room.serverMuted = room.muted
        self.room = room
        send(.message(session: session, handle: handle, .join(room.janusID, display: room.display, muted: room.muted, pin: room.pin),
                      offer: nil),
             on: socket, purpose: .join(.init(generation: room.generation, handle: handle)), into: &effects)
    }

    private mutating func sendCreate(into effects: inout [VoiceEffect]) {
        guard var room, let socket = link.openSocket, let session = link.readySession, let handle = link.attachedHandle else { return }
        room.step = .creating
        self.room = room
        send(.message(session: session, handle: handle, .create(room.janusID), offer: nil), on: socket,
             purpose: .createRoom(.init(generation: room.generation, handle: handle)), into: &effects)
    }

    // MARK: Replies

    /// The plugin's answer to a room request (a synchronous `success` or an event with the
    /// request's transaction).
    mutating func roomReply(_ purpose: JanusPurpose, _ event: JanusPluginEvent, now: ContinuousClock.Instant,
                            into effects: inout [VoiceEffect]) {
        guard let request = purpose.room, let room, request.generation == room.generation, room.state.isActive,
              request.handle == link.attachedHandle else { return }
        let message = event.message
        switch purpose {
        case .exists:
            switch message {
            case .exists(true): sendJoin(into: &effects)
            case .exists(false) where settings.createRooms: sendCreate(into: &effects)
            case .exists(false):
                effects.append(.log(.noRoom(room: room.name)))
                fail(.daemon(.noRoom, "voice room \(room.name) does not exist on the voice server (voiceCreateRooms is false)"),
                     into: &effects)
            default: unexpected(message, to: "exists", into: &effects)
            }
        case .createRoom:
            switch message {
            case .created: sendJoin(into: &effects)
            case .error(let error) where error.code == AudioBridgeErrorCode.roomExists:
                // Made by someone else meanwhile.
                sendJoin(into: &effects)
            default: unexpected(message, to: "create", into: &effects)
            }
        case .join:
            switch message {
            case .joined(let selfId, let others): joined(selfId: selfId, others: others, now: now, into: &effects)
            case .error(let error) where error.code == AudioBridgeErrorCode.noSuchRoom:
                effects.append(.log(.noRoom(room: room.name)))
                fail(.daemon(.noRoom, "voice room \(room.name) does not exist on the voice server: \(error.reason)"), into: &effects)
            default: unexpected(message, to: "join", into: &effects)
            }
        case .configure(_, let offer):
            switch message {
            case .ok where offer:
                guard let jsep = event.jsep, jsep.type == "answer" else {
                    refused(JanusError(code: 0, reason: "no SDP answer to the offer"), into: &effects)
                    return
                }
                answer(jsep.sdp, into: &effects)
            case .ok: break
            default:
                // A refused offer ends the room; a refused mute only leaves the server's view stale.
                if offer { unexpected(message, to: "configure", into: &effects) } else {
                    effects.append(.log(.ignored("a refused configure: \(message)")))
                }
            }
        case .listParticipants:
            switch message {
            case .participants(let everyone): relisted(everyone, now: now, into: &effects)
            case .error(let error) where error.code == AudioBridgeErrorCode.noSuchRoom:
                end(as: .closed, reason: .destroyed, error: nil, keepLink: false, into: &effects)
            default:
                effects.append(.log(.ignored("an answer to listparticipants: \(message)")))
                rejoin(now: now, into: &effects)
            }
        case .info, .create, .attach, .keepalive, .claim:
            break
        }
    }

    /// An error (or an answer of the wrong kind) to a room request: the server refused.
    private mutating func unexpected(_ message: AudioBridgeMessage, to request: String, into effects: inout [VoiceEffect]) {
        if case .error(let error) = message {
            refused(error, into: &effects)
        } else {
            refused(JanusError(code: 0, reason: "an unexpected answer to \(request)"), into: &effects)
        }
    }

    /// This box is in the room: its id and the others. After a rejoin, the others are compared
    /// with those known before so that nobody who left meanwhile stays.
    private mutating func joined(selfId: String, others: JanusParticipants, now: ContinuousClock.Instant,
                                 into effects: inout [VoiceEffect]) {
        guard var room else { return }
        let again = room.everJoined
        room.selfId = selfId
        room.step = .joined
        room.everJoined = true
        room.state = .joined
        let changes = room.roster.replace(with: others.list.filter { $0.id != selfId })
        self.room = room
        effects.append(.log(.joined(room: room.name, selfId: selfId, others: room.roster.peers.count, again: again)))
        if others.omitted > 0 { effects.append(.log(.participantsLeftOut(room: room.name, count: others.omitted))) }
        if again { publish(changes, into: &effects) }
        publishState(into: &effects)
        answerWaitingJoins(into: &effects)
        advance(now: now, into: &effects)
    }

    // MARK: After a reconnection

    /// The session was claimed on a new WebSocket: a room that was in reads its list again on its
    /// handle; one that was half-way (a request or an answer lost with the WebSocket), or whose
    /// handle is not known, is joined again.
    mutating func roomAfterClaim(now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard var room, room.state.isActive, let socket = link.openSocket, let session = link.readySession else { return }
        guard let handle = link.attachedHandle, room.step == .joined || room.step == .relisting, media?.isSettled != false else {
            if room.step != .waiting { rejoin(now: now, into: &effects) }
            return
        }
        room.step = .relisting
        self.room = room
        send(.message(session: session, handle: handle, .listParticipants(room.janusID), offer: nil), on: socket,
             purpose: .listParticipants(.init(generation: room.generation, handle: handle)), into: &effects)
    }

    /// The list read again (this box included): whoever is gone left, whoever is new joined; when
    /// this box is not in it, the room is joined again.
    private mutating func relisted(_ everyone: JanusParticipants, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard var room, room.step == .relisting, let selfId = room.selfId else { return }
        guard everyone.list.contains(where: { $0.id == selfId }) else {
            rejoin(now: now, into: &effects)
            return
        }
        let changes = room.roster.replace(with: everyone.list.filter { $0.id != selfId })
        room.step = .joined
        room.state = .joined
        self.room = room
        if everyone.omitted > 0 { effects.append(.log(.participantsLeftOut(room: room.name, count: everyone.omitted))) }
        publish(changes, into: &effects)
        publishState(into: &effects)
        advance(now: now, into: &effects)
    }

    /// The room is joined again from the start on a fresh handle and a fresh media process (the
    /// AudioBridge holds one PeerConnection per participant, and the process one offer per life).
    mutating func rejoin(now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard var room, room.state.isActive else { return }
        // A handle nothing of the room went on yet is kept.
        if room.step != .waiting {
            if let socket = link.openSocket, let session = link.readySession, let handle = link.attachedHandle {
                send(.detach(session: session, handle: handle), on: socket, into: &effects)
            }
            // A handle of a session still to claim cannot be detached now; its PeerConnection is
            // gone with the media process, so the server takes its participant out by itself.
            link.handle = .none
        }
        transactions = transactions.filter { $0.value.room == nil }
        stopMedia(into: &effects)
        room.step = .waiting
        room.serverMuted = nil
        if room.state == .joined { room.state = .reconnecting }
        self.room = room
        publishState(into: &effects)
        advance(now: now, into: &effects)
    }

    // MARK: Events

    /// An AudioBridge event for the current handle that answers no request.
    mutating func roomEvent(_ message: AudioBridgeMessage, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard var room, room.state.isActive, room.isIn, let selfId = room.selfId else { return }
        switch message {
        case .othersJoined(let list), .updated(let list):
            var changes: [VoiceRoster.Change] = []
            var leftOut = list.omitted
            for entry in list.list where entry.id != selfId {
                if !room.roster.contains(entry.id), room.roster.peers.count >= VoiceRoster.limit { leftOut += 1 }
                changes += room.roster.upsert(entry)
            }
            self.room = room
            if leftOut > 0 { effects.append(.log(.participantsLeftOut(room: room.name, count: leftOut))) }
            publish(changes, into: &effects)
        case .leaving(let id) where id == selfId || id == "ok":
            // The server took this box out: join again.
            rejoin(now: now, into: &effects)
        case .leaving(let id):
            let changes = room.roster.remove(id, .left)
            self.room = room
            publish(changes, into: &effects)
        case .kicked(let id) where id == selfId:
            end(as: .left, reason: .kicked, error: nil, keepLink: false, into: &effects)
        case .kicked(let id):
            let changes = room.roster.remove(id, .kicked)
            self.room = room
            publish(changes, into: &effects)
        case .talking(let id, let talking) where id != selfId:
            // This box's own talking comes from its media process, which measures it first hand.
            let changes = room.roster.setTalking(id, talking)
            self.room = room
            publish(changes, into: &effects)
        case .destroyed:
            end(as: .closed, reason: .destroyed, error: nil, keepLink: false, into: &effects)
        case .error(let error):
            effects.append(.log(.ignored("an AudioBridge error event (\(error.code)): \(error.reason)")))
        case .talking, .exists, .created, .joined, .participants, .left, .ok, .other:
            break
        }
    }
}
