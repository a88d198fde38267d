import IPCProtocol
import JSONValue
import SocketIO

/// The signalling link: the WebSocket, the Janus session on it (`info`, `create`, keepalives,
/// `claim` after a lost WebSocket) and the AudioBridge handle, and how Janus' messages are
/// dispatched.
extension VoiceCore {
    // MARK: Moving on

    /// Takes the next step an active room needs, if none is on its way: the media process, the
    /// WebSocket, the session, the handle, then the room itself (`advanceRoom`).
    mutating func advance(now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard let room, room.state.isActive else { return }
        if media == nil { startMedia(into: &effects) }
        switch link.socket {
        case .closed:
            openSocket(into: &effects)
        case .opening, .waiting:
            return
        case .open(let socket):
            switch link.session {
            case .none:
                if let lost = link.lost {
                    link.session = .claiming(lost)
                    send(.claim(session: lost), on: socket, purpose: .claim(lost), into: &effects)
                } else {
                    link.session = .asking
                    send(.info, on: socket, purpose: .info, into: &effects)
                }
            case .asking, .creating, .claiming:
                return
            case .ready(let session):
                switch link.handle {
                case .none:
                    link.handle = .attaching
                    send(.attach(session: session), on: socket, purpose: .attach, into: &effects)
                case .attaching:
                    return
                case .attached(let handle):
                    advanceRoom(socket: socket, session: session, handle: handle, into: &effects)
                }
            }
        }
    }

    private mutating func openSocket(into effects: inout [VoiceEffect]) {
        guard let url = settings.url else {
            fail(.daemon(.notConfigured, "voice rooms need the voice server's address (voiceUrl)", extra: ["missing": ["voiceUrl"]]),
                 into: &effects)
            return
        }
        lastSocket += 1
        let socket = VoiceSocketID(value: lastSocket)
        link.socket = .opening(socket)
        link.attempts += 1
        if link.attempts == 1 { effects.append(.log(.connecting(host: EndpointURL(url)?.host ?? "(unreadable address)"))) }
        effects.append(.openSocket(socket, url: url))
    }

    /// Sends `kind` on `socket` with a new transaction, remembered as `purpose` when given.
    mutating func send(_ kind: JanusRequest.Kind, on socket: VoiceSocketID, purpose: JanusPurpose? = nil,
                       into effects: inout [VoiceEffect]) {
        lastTransaction += 1
        let transaction = "v\(lastTransaction)"
        if let purpose { transactions[transaction] = purpose }
        effects.append(.sendJanus(socket, JanusRequest(transaction: transaction, kind: kind, credentials: settings.credentials)))
    }

    /// Ends the link: the session destroyed, the WebSocket closed, its timers cancelled; the next
    /// room starts a fresh one.
    mutating func closeLink(into effects: inout [VoiceEffect]) {
        if let socket = link.openSocket, let session = link.readySession {
            send(.destroy(session: session), on: socket, into: &effects)
        }
        switch link.socket {
        case .opening(let socket): effects.append(.closeSocket(socket))
        case .open(let socket): effects += [.closeSocket(socket), .cancel(.keepalive)]
        case .waiting: effects.append(.cancel(.reconnect))
        case .closed: break
        }
        link = VoiceLink()
        transactions.removeAll()
        outage.reset()
        backoff = ReconnectBackoff(policy: settings.reconnect)
    }

    // MARK: The WebSocket

    mutating func socketOpened(_ socket: VoiceSocketID, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard link.socket == .opening(socket) else { return }
        link.socket = .open(socket)
        backoff.connected(at: now)
        // The session must be there within a keepalive interval (`keepaliveDue` checks).
        effects.append(.schedule(.keepalive, at: now + Self.longestKeepalive))
        if let ended = outage.connected(at: now) {
            effects.append(.log(.connectionBack(outage: ended.duration, failedAttempts: ended.failures)))
        }
        advance(now: now, into: &effects)
    }

    mutating func socketClosed(_ socket: VoiceSocketID, reason: String, now: ContinuousClock.Instant,
                               into effects: inout [VoiceEffect]) {
        let wasOpen: Bool
        switch link.socket {
        case .open(socket): wasOpen = true
        case .opening(socket): wasOpen = false
        default: return
        }
        let reason = PeerText.clipped(reason)
        if wasOpen { backoff.disconnected(at: now) }
        // A ready session may be claimed on the next WebSocket, with its handle; one half made
        // is forgotten. (A failed attempt between the two has no session of its own: the one to
        // claim keeps its handle.)
        switch link.session {
        case .ready(let session), .claiming(let session): link.lost = session
        case .none, .asking, .creating: if link.lost == nil { link.handle = .none }
        }
        if wasOpen { effects.append(.cancel(.keepalive)) }
        link.session = .none
        if link.handle == .attaching { link.handle = .none }
        // Synchronous replies die with the WebSocket; an event answering `join` or `configure`
        // may still come once the session is claimed.
        transactions = transactions.filter { $0.value.isAsynchronous }
        guard let room, room.state.isActive else {
            link = VoiceLink()
            return
        }
        guard room.everJoined else {
            // Never in the room: the server is unreachable, and the join fails.
            link.socket = .closed
            effects.append(.log(.unreachable(room: room.name, reason: reason)))
            fail(.daemon(.backendUnreachable, "the voice server cannot be reached: \(reason)"), into: &effects)
            return
        }
        // Seed 002's Disconnected: try again with the backend's backoff; the room comes back by itself.
        link.socket = .waiting
        let delay = backoff.nextDelay(using: &random)
        effects.append(.schedule(.reconnect, at: now + delay))
        let failure = wasOpen ? outage.lost(at: now) : outage.attemptFailed(at: now)
        effects.append(.log(.connectionLost(reason: reason, failure, retryIn: delay)))
        if room.state == .joined {
            self.room?.state = .reconnecting
            publishState(into: &effects)
        }
    }

    mutating func reconnectDue(now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard link.socket == .waiting else { return }
        link.socket = .closed
        advance(now: now, into: &effects)
    }

    // MARK: The session

    /// The next keepalive; a server that left the last one unanswered, or made no session within
    /// a keepalive interval of the WebSocket opening, stopped answering: the WebSocket is closed
    /// and handled as lost (a room never joined fails `BackendUnreachable`; a joined one reconnects).
    mutating func keepaliveDue(now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard let socket = link.openSocket else { return }
        guard let session = link.readySession, !transactions.values.contains(.keepalive) else {
            effects.append(.closeSocket(socket))
            socketClosed(socket, reason: "the voice server stopped answering", now: now, into: &effects)
            return
        }
        send(.keepalive(session: session), on: socket, purpose: .keepalive, into: &effects)
        effects.append(.schedule(.keepalive, at: now + link.keepaliveEvery))
    }

    /// At least every `longestKeepalive`, and three times per session timeout (0: none).
    static func keepaliveInterval(sessionTimeout seconds: Int?) -> Duration {
        guard let seconds, seconds > 0 else { return longestKeepalive }
        return min(longestKeepalive, .milliseconds(Int64(min(seconds, 86_400)) * 1000 / 3))
    }

    private mutating func sessionReady(_ session: UInt64, claimed: Bool, now: ContinuousClock.Instant,
                                       into effects: inout [VoiceEffect]) {
        link.session = .ready(session)
        link.lost = nil
        effects.append(.schedule(.keepalive, at: now + link.keepaliveEvery))
        effects.append(.log(claimed ? .sessionClaimed(session: session) : .sessionCreated(session: session, keepalive: link.keepaliveEvery)))
        if claimed { roomAfterClaim(now: now, into: &effects) }
        advance(now: now, into: &effects)
    }

    /// The session is gone on the server (timed out, or not there to claim): a new session, and
    /// the room joined again on it.
    mutating func sessionLost(_ reason: String, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        // The new session must be there within a keepalive interval.
        if link.openSocket != nil { effects.append(.schedule(.keepalive, at: now + Self.longestKeepalive)) }
        link.session = .none
        link.lost = nil
        link.handle = .none
        transactions.removeAll()
        guard room?.state.isActive == true else { return }
        effects.append(.log(.sessionLost(reason: reason)))
        rejoin(now: now, into: &effects)
    }

    // MARK: Janus' messages

    mutating func received(_ text: String, on socket: VoiceSocketID, now: ContinuousClock.Instant,
                           into effects: inout [VoiceEffect]) {
        guard link.socket == .open(socket) else { return }
        let message: JanusMessage
        do {
            message = try JanusMessage(text: text)
        } catch {
            effects.append(.log(.ignored("a voice server message: \(error)")))
            return
        }
        switch message {
        case .serverInfo(let transaction, let timeout):
            guard take(transaction) == .info, link.session == .asking else { return }
            link.keepaliveEvery = Self.keepaliveInterval(sessionTimeout: timeout)
            link.session = .creating
            send(.create, on: socket, purpose: .create, into: &effects)
        case .created(let transaction, let id):
            switch take(transaction) {
            case .create? where link.session == .creating: sessionReady(id, claimed: false, now: now, into: &effects)
            case .attach?: attached(id, on: socket, now: now, into: &effects)
            default: break
            }
        case .success(let transaction):
            if case .claim(let session)? = take(transaction), link.session == .claiming(session) {
                sessionReady(session, claimed: true, now: now, into: &effects)
            }
        case .ack(let transaction):
            if transactions[transaction] == .keepalive { transactions[transaction] = nil }
        case .error(let transaction, let error):
            guard let transaction, let purpose = take(transaction) else {
                effects.append(.log(.ignored("an error from the voice server (\(error.code)): \(error.reason)")))
                return
            }
            failed(purpose, error, now: now, into: &effects)
        case .pluginResult(let event):
            guard let transaction = event.transaction, let purpose = take(transaction) else { return }
            roomReply(purpose, event, now: now, into: &effects)
        case .event(let event):
            if let transaction = event.transaction {
                // The answer to `join` or `configure`; one for a request no longer awaited is stale.
                guard let purpose = take(transaction) else { return }
                roomReply(purpose, event, now: now, into: &effects)
            } else if event.sender == link.attachedHandle {
                roomEvent(event.message, now: now, into: &effects)
            }
        case .webrtcUp(let sender):
            if sender == link.attachedHandle { effects.append(.log(.mediaUp)) }
        case .hangup(let sender, let reason):
            // The AudioBridge takes a participant whose PeerConnection is gone out of the room.
            guard sender == link.attachedHandle, media?.offerSent == true else { return }
            mediaFailed("the server hung up the media\(reason.map { ": \($0)" } ?? "")", now: now, into: &effects)
        case .trickle(let sender, let candidate):
            guard sender == link.attachedHandle else { return }
            remoteCandidate(candidate, into: &effects)
        case .timeout(let session):
            guard link.readySession == session else { return }
            sessionLost("the server timed the session out", now: now, into: &effects)
        case .detached(let sender):
            guard sender == link.attachedHandle else { return }
            link.handle = .none
            rejoin(now: now, into: &effects)
        case .media(let sender, let receiving):
            if sender == link.attachedHandle { effects.append(.log(.serverReceives(receiving))) }
        case .slowLink, .other:
            break
        }
    }

    /// The purpose of `transaction`, no longer awaited.
    mutating func take(_ transaction: String) -> JanusPurpose? {
        transactions.removeValue(forKey: transaction)
    }

    private mutating func attached(_ handle: UInt64, on socket: VoiceSocketID, now: ContinuousClock.Instant,
                                   into effects: inout [VoiceEffect]) {
        guard let session = link.readySession else { return }
        if link.attachedHandle != nil {
            // A second attach crossed a room change: one handle is enough.
            send(.detach(session: session, handle: handle), on: socket, into: &effects)
            return
        }
        link.handle = .attached(handle)
        advance(now: now, into: &effects)
    }

    /// A request failed at Janus' level (or the plugin's, for room requests: `roomReply`).
    private mutating func failed(_ purpose: JanusPurpose, _ error: JanusError, now: ContinuousClock.Instant,
                                 into effects: inout [VoiceEffect]) {
        switch purpose {
        case .info:
            // Not needed to go on: the default keepalive holds for any timeout of 45 s or more.
            guard link.session == .asking, let socket = link.openSocket else { return }
            link.session = .creating
            send(.create, on: socket, purpose: .create, into: &effects)
        case .create, .attach:
            refused(error, into: &effects)
        case .claim:
            if error.code == JanusError.unauthorized {
                refused(error, into: &effects)
            } else {
                sessionLost("the server no longer has it: \(error.reason)", now: now, into: &effects)
            }
        case .keepalive:
            if error.code == JanusError.sessionNotFound { sessionLost(error.reason, now: now, into: &effects) }
        case .exists(let request), .createRoom(let request), .join(let request), .configure(let request, _),
             .listParticipants(let request):
            guard request.generation == room?.generation, request.handle == link.attachedHandle else { return }
            switch error.code {
            case JanusError.sessionNotFound: sessionLost(error.reason, now: now, into: &effects)
            case JanusError.handleNotFound:
                link.handle = .none
                rejoin(now: now, into: &effects)
            default: refused(error, into: &effects)
            }
        }
    }

    /// The server refused (a secret, a token, a pin, a room it will not make): `BackendRefused`
    /// with its reason, and no retry.
    mutating func refused(_ error: JanusError, into effects: inout [VoiceEffect]) {
        guard let room, room.state.isActive else { return }
        let reason = error.code == JanusError.unauthorized
            ? "\(error.reason) (check voiceApiSecret and voiceToken)" : error.reason
        effects.append(.log(.refused(room: room.name, reason: "\(reason) (\(error.code))")))
        fail(.daemon(.backendRefused, "the voice server refused room \(room.name): \(reason)",
                     extra: ["reason": .string(error.reason), "code": .number(Double(error.code))]), into: &effects)
    }
}
