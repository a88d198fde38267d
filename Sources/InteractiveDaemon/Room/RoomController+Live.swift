import IPCProtocol
import JSONValue
import SocketIO

/// Live mode: the Socket.IO connection, join-room, and what the server sends.
extension RoomController {
    /// How long the server has to ack join-room before the room is taken as joined.
    static let joinAckTimeout: Duration = .seconds(5)

    /// Opens the connection if needed and joins the room on it.
    func startLive() async {
        guard let wanted = LiveSocketSettings(settings) else { return }
        if let socket, socketSettings == wanted {
            if await socket.isConnected {
                sendJoin()
            } else {
                await socket.reconnectNow()
            }
            return
        }
        await closeSocket()
        openSocket(wanted)
    }

    /// Reconnects with fresh credentials (login, logout, configuration change, retry after error).
    func reconnectLive(reason: String) async {
        guard var current = room, current.mode == .live else { return }
        log.info("Reconnecting the live connection of room \(current.mediaId): \(reason)", ["INTERACTIVE_MEDIA_ID": current.mediaId])
        current.state = .joining
        current.error = nil
        await setRoom(current)
        if let socket, LiveSocketSettings(settings) == socketSettings {
            joinSentOnSocket = nil
            await socket.reconnectNow()
        } else {
            await closeSocket()
            if let wanted = LiveSocketSettings(settings) { openSocket(wanted) }
        }
    }

    /// How long acks still waiting may take to go out before the connection is closed on purpose.
    static let ackDrainLimit: Duration = .seconds(2)

    /// Leaves the server room; closes the connection (once pending acks went out, within a
    /// limit) unless another live room follows on it.
    func leaveLive(_ current: Room, keepSocket: Bool) async {
        if let socket, await socket.isConnected {
            try? await socket.emit("leave-room", [["mediaId": .string(current.mediaId), "userId": JSONValue(session.userId)]],
                                   whenDisconnected: .fail)
        }
        joinSentOnSocket = nil
        guard !keepSocket else { return }
        await tracking.drain(within: Self.ackDrainLimit)
        await closeSocket()
    }

    private func openSocket(_ wanted: LiveSocketSettings) {
        socketGeneration += 1
        let generation = socketGeneration
        let log = self.log
        let client = SocketIOClient(
            configuration: wanted.configuration,
            credentials: { [weak self] in await self?.credentials(wanted) ?? wanted.credentials(for: .anonymous) },
            log: { level, message in
                switch level {
                case .error: log.error("Socket.IO: \(message)")
                case .warning: log.warning("Socket.IO: \(message)")
                case .info: log.info("Socket.IO: \(message)")
                case .debug: log.debug("Socket.IO: \(message)")
                }
            })
        socket = client
        socketSettings = wanted
        if wanted.tls.insecure { log.warning("insecureTLS is on: the backend's certificate is not verified (development only)") }
        socketTasks = [
            Task { [weak self] in
                for await state in client.states { await self?.socketStateChanged(state, generation: generation) }
            },
            // Server events are handled on the thread that decoded them (the Socket.IO reactor):
            // the room, overlay and event-bus actors run there in turn and the subscribers'
            // sockets are written from there, with no thread hand-off between the backend's
            // frame and the player's line. Nothing on that path blocks (the store and HTTP run
            // on their own threads).
            Task(executorPreference: client.ioExecutor) { [weak self] in
                for await event in client.events { await self?.socketEvent(event, generation: generation) }
            },
        ]
        Task { await client.connect() }
    }

    func closeSocket() async {
        guard socket != nil else { return }
        socketTasks.forEach { $0.cancel() }
        socketTasks = []
        await tracking.setTransport(nil)
        socketGeneration += 1
        if let socket { await socket.disconnect() }
        socket = nil
        socketSettings = nil
        socketId = nil
        socketEverConnected = false
        joinSentOnSocket = nil
        backendOutage.reset()
        await publishConnection(ConnectionStateEvent(state: "idle"))
    }

    private func credentials(_ wanted: LiveSocketSettings) -> SocketIOCredentials { wanted.credentials(for: session) }

    // MARK: Connection states

    private func socketStateChanged(_ state: SocketIOConnectionState, generation: Int) async {
        guard generation == socketGeneration else { return }
        switch state {
        case .idle:
            return
        case .connecting(let attempt):
            // After a connection was up, a new attempt means it was lost (an immediate retry
            // skips the reconnecting state).
            let wasConnected = socketId != nil
            if wasConnected {
                await connectionLost()
                logFailure(backendOutage.lost(at: .now), "connection lost", retry: attempt, in: .zero)
            }
            let state = wasConnected || socketEverConnected ? "reconnecting" : "connecting"
            await publishConnection(ConnectionStateEvent(state: state, attempt: attempt, retryInMs: 0,
                                                         error: wasConnected ? "connection lost" : nil))
        case .connected(let id):
            socketId = id
            socketEverConnected = true
            if let outage = backendOutage.connected(at: .now) {
                log.info("Backend connection back after \(BackendOutage.seconds(outage.duration)) (\(outage.failures) failed attempts); socket \(id)",
                         ["INTERACTIVE_SOCKET_ID": id, "INTERACTIVE_OUTAGE_MS": String(BackendOutage.milliseconds(outage.duration))],
                         id: .backendRestored)
            } else {
                log.notice("Connected to the backend; socket \(id)", ["INTERACTIVE_SOCKET_ID": id], id: .backendConnected)
            }
            await publishConnection(ConnectionStateEvent(state: "connected", socketId: id))
            await overlays.setContext(roomContext)
            if let socket { await tracking.setTransport(LiveAckTransport(socket: socket)) }
            sendJoin()
        case .reconnecting(let attempt, let retryIn, let error):
            await connectionLost()
            logFailure(backendOutage.attemptFailed(at: .now), error.description, retry: attempt, in: retryIn)
            await publishConnection(ConnectionStateEvent(state: "reconnecting", attempt: attempt,
                                                         retryInMs: Int(truncatingIfNeeded: BackendOutage.milliseconds(retryIn)),
                                                         error: PeerText.clipped(error.description)))
        case .refused(let error):
            await connectionLost()
            backendOutage.reset()
            log.error("The backend refused the connection: \(error)", id: .backendDisconnected)
            await publishConnection(ConnectionStateEvent(state: "disconnected", error: PeerText.clipped(error.description)))
            await failRoom(.daemon(.backendRefused, "the backend refused the connection: \(error)"))
        case .disconnected(let error):
            await connectionLost()
            backendOutage.reset()
            guard error != .disconnectedByClient else { return }
            log.error("The backend ended the connection: \(error)", id: .backendDisconnected)
            await publishConnection(ConnectionStateEvent(state: "disconnected", error: PeerText.clipped(error.description)))
            await failRoom(.daemon(.backendUnreachable, "the backend ended the connection: \(error)"))
        }
    }

    /// One warning when an outage begins; the attempts after it at debug.
    private func logFailure(_ decision: BackendOutage.FailureLog, _ reason: String, retry attempt: Int, in delay: Duration) {
        let retry = "attempt \(attempt) in \(BackendOutage.seconds(delay))"
        switch decision {
        case .outageBegins:
            let what = socketEverConnected ? "Backend connection lost" : "Backend unreachable"
            log.warning("\(what): \(reason); reconnecting (\(retry); later attempts are logged at debug level)",
                        id: .backendDisconnected)
        case .stillOut(let failures):
            log.debug("Backend still unreachable after \(failures) failed attempts: \(reason); \(retry)")
        }
    }

    /// The connection is gone: a joined room goes back to joining; overlays stay.
    private func connectionLost() async {
        await tracking.setTransport(nil)
        socketId = nil
        joinSentOnSocket = nil
        await overlays.setContext(roomContext)
        if var current = room, current.mode == .live, current.state == .joined {
            current.state = .joining
            await setRoom(current)
        }
    }

    private func failRoom(_ error: RPCError) async {
        guard var current = room, current.mode == .live, current.isActive else { return }
        current.state = .error
        current.error = error
        await setRoom(current)
    }

    // MARK: join-room

    /// Sends join-room once per connection (after CONNECT succeeded); the ack makes the room joined.
    func sendJoin() {
        guard let socket, let socketId, let current = room, current.mode == .live, current.isActive,
              joinSentOnSocket != socketId else { return }
        joinSentOnSocket = socketId
        let payload: JSONValue = [
            "mediaId": .string(current.mediaId), "userId": JSONValue(session.userId),
            "displayName": JSONValue(session.displayName), "os": JSONValue(settings.os),
        ]
        let generation = socketGeneration
        interactiveStatusLoad = session.isLoggedIn ? loadInteractiveStatus(mediaId: current.mediaId) : nil
        Task { [weak self] in
            let acked: Bool
            do {
                _ = try await socket.emitWithAck("join-room", [payload], timeout: RoomController.joinAckTimeout, whenDisconnected: .fail)
                acked = true
            } catch SocketIOError.timeout {
                acked = false
            } catch {
                return  // The connection went; the next one joins again.
            }
            await self?.joinAcknowledged(mediaId: current.mediaId, socketId: socketId, acked: acked, generation: generation)
        }
    }

    private func joinAcknowledged(mediaId: String, socketId: String, acked: Bool, generation: Int) async {
        guard generation == socketGeneration, self.socketId == socketId, var current = room, current.mediaId == mediaId,
              current.mode == .live, current.state == .joining else { return }
        if !acked {
            log.warning("The backend did not ack join-room within 5 s; taking the room as joined", ["INTERACTIVE_MEDIA_ID": mediaId])
        }
        current.state = .joined
        current.error = nil
        await setRoom(current)
        log.notice("Room \(mediaId) (live) joined", ["INTERACTIVE_MEDIA_ID": mediaId], id: .roomJoined)
    }

    /// The backend's answered timelines for this viewer, so they are not shown again.
    func loadInteractiveStatus(mediaId: String) -> Task<Void, Never>? {
        guard let api = try? BackendAPI(settings: settings, token: session.token) else { return nil }
        return Task { [weak self, log] in
            do {
                let answered = try await api.interactiveStatus(mediaId: mediaId).answered
                await self?.overlays.addAnswered(answered)
            } catch {
                log.warning("Interactive status unavailable: \(error)", ["INTERACTIVE_MEDIA_ID": mediaId])
            }
        }
    }

    // MARK: Server events

    private func socketEvent(_ event: SocketIOEvent, generation: Int) async {
        guard generation == socketGeneration else { return }
        if let token = event.ackToken { try? await socket?.ack(token, []) }
        guard let room, room.mode == .live, room.isActive, let payload = event.args.first else { return }
        switch event.name {
        case "overlay", "ex-overlay":
            await overlayArrived(payload, receivedAt: Timestamp.nowMs(), room: room)
        case "update-result":
            guard let timelineId = payload["timelineId"]?.idString else { return }
            await overlays.post(timelineId: timelineId, key: "UPDATE_DATA_INTERACTIVE", data: payload["data"] ?? .null)
        case "recall-overlay":
            guard let timelineId = payload["timelineId"]?.idString else { return }
            await overlays.recall(timelineId: timelineId)
            await predict.recall(timelineId: timelineId)
        case "predict-result":
            await predict.result(payload)
        case "action-button-predict":
            await predict.buttonData(payload)
        default:
            log.debug("Ignoring backend event \(event.name)")
        }
    }

    private func overlayArrived(_ payload: JSONValue, receivedAt: Int64, room: Room) async {
        guard let overlay = IncomingOverlay(payload: payload) else {
            log.warning("Ignoring an overlay without timelineId", ["INTERACTIVE_MEDIA_ID": room.mediaId])
            return
        }
        if overlay.traceLock, let socket {
            // Sent with or without a tracking id: the lock is the timeline's, not tracking's.
            try? await socket.emit("receive-message", [[
                "trackingId": JSONValue(overlay.trackingId), "timelineId": .string(overlay.timelineId),
                "mediaId": .string(room.mediaId), "socketId": JSONValue(socketId), "receivedAt": .number(Double(receivedAt)),
            ]])
        }
        // Bounded by the REST timeout. The room may change meanwhile: the overlay stays this room's.
        await interactiveStatusLoad?.value
        await route(overlay, receivedAt: receivedAt, room: RoomKey(mediaId: room.mediaId, mode: .live))
    }

    // MARK: Player

    /// `player.state` in a live room: forwarded to the backend as `ckst`.
    func playerState(state: String, position: Double?) async {
        guard let room, room.mode == .live, room.isActive, let socket else { return }
        try? await socket.emit("ckst", [["mediaId": .string(room.mediaId), "state": .string(state), "position": JSONValue(position)]],
                               whenDisconnected: .fail)
    }
}
