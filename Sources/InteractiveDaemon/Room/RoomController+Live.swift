import IPCProtocol
import JSONValue
import Runtime
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
            core.rejoinNeeded()
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
        core.rejoinNeeded()
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
        // Unstructured: these two live as long as this connection, not the service, and
        // `closeSocket` cancels them when the connection is replaced or closed. They prefer the
        // loop, as the service's child tasks do (an unstructured task inherits no preference):
        // otherwise their nonisolated steps (`Task.yield()`, `TrackingFeed.keepUp()`) would run on
        // the cooperative pool, two thread hand-offs per backend event on the display path.
        let loop = EventLoop.shared.taskExecutor
        socketTasks = [
            Task(executorPreference: loop) { await self.followStates(of: client, generation: generation) },
            Task(executorPreference: loop) { await self.followEvents(of: client, generation: generation) },
        ]
        work.start { await client.connect() }
    }

    /// Follows one connection's states, on this actor (so each resumes on the loop, without a hop).
    private func followStates(of client: SocketIOClient, generation: Int) async {
        for await state in client.states { await socketStateChanged(state, generation: generation) }
    }

    /// Follows one connection's server events, on this actor: the backend's frame reaches the
    /// room, the overlays and the event bus on the loop.
    private func followEvents(of client: SocketIOClient, generation: Int) async {
        for await event in client.events {
            await socketEvent(event, generation: generation)
            // One backend event per turn of the event loop: under a flood, local requests queued
            // meanwhile are answered between two events instead of after the whole backlog.
            await Task.yield()
        }
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
        core.connectionClosed()
        statusGate.reset()
        await publishConnection(ConnectionStateEvent(state: "idle"))
    }

    private func credentials(_ wanted: LiveSocketSettings) -> SocketIOCredentials { wanted.credentials(for: session) }

    // MARK: Connection states

    private func socketStateChanged(_ state: SocketIOConnectionState, generation: Int) async {
        guard generation == socketGeneration, let event = Self.linkEvent(state) else { return }
        await perform(core.link(event, now: .now))
    }

    /// The Socket.IO client's state as the room core takes it; nil for `idle`.
    static func linkEvent(_ state: SocketIOConnectionState) -> BackendLinkEvent? {
        switch state {
        case .idle: return nil
        case .connecting(let attempt): return .connecting(attempt: attempt)
        case .connected(let id): return .connected(socketId: id)
        case .reconnecting(let attempt, let retryIn, let error):
            return .reconnecting(attempt: attempt, retryIn: retryIn, error: error.description)
        case .refused(let error): return .refused(error: error.description)
        case .disconnected(let error): return .disconnected(error: error.description, byClient: error == .disconnectedByClient)
        }
    }

    // MARK: join-room

    /// Sends join-room once per connection (after CONNECT succeeded); the ack makes the room joined.
    func sendJoin() {
        guard let socket, let current = room, let socketId = core.joinToSend() else { return }
        let payload: JSONValue = [
            "mediaId": .string(current.mediaId), "userId": JSONValue(session.userId),
            "displayName": JSONValue(session.displayName), "os": JSONValue(settings.os),
        ]
        let generation = socketGeneration
        requestInteractiveStatus(mediaId: current.mediaId)
        work.start { [weak self] in
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
        guard generation == socketGeneration else { return }
        await perform(core.joinAcknowledged(mediaId: mediaId, socketId: socketId, acked: acked))
    }

    /// Requests the backend's answered timelines for this viewer (so they are not shown again),
    /// off the display path: the backend's events wait in `statusGate` until the reply or the
    /// failure comes back (`interactiveStatusArrived`). A viewer not logged in has none to wait for.
    private func requestInteractiveStatus(mediaId: String) {
        guard session.isLoggedIn, let api = try? BackendAPI(settings: settings, token: session.token) else {
            if statusGate.pendingRequest != nil {
                statusGate.release()
                work.start { [weak self] in await self?.drainHeld() }
            }
            return
        }
        let request = statusGate.request()
        let log = self.log
        work.start { [weak self] in
            var answered: [String] = []
            do {
                answered = try await api.interactiveStatus(mediaId: mediaId).answered
            } catch {
                log.warning("Interactive status unavailable: \(error)", ["INTERACTIVE_MEDIA_ID": mediaId])
            }
            await self?.interactiveStatusArrived(request, answered: answered)
        }
    }

    private func interactiveStatusArrived(_ request: Int, answered: [String]) async {
        await overlays.addAnswered(answered)
        if statusGate.arrived(request) { await drainHeld() }
    }

    /// Hands back the events held for the interactive status, in order, one at a time; events
    /// that arrive meanwhile queue behind them. One drainer at a time keeps the order.
    private func drainHeld() async {
        guard !drainingHeld else { return }
        drainingHeld = true
        while let next = statusGate.next() { await dispatch(next) }
        drainingHeld = false
        for waiter in drainWaiters { waiter.resume() }
        drainWaiters = []
    }

    // MARK: Server events

    private func socketEvent(_ event: SocketIOEvent, generation: Int) async {
        guard generation == socketGeneration else { return }
        if let token = event.ackToken { try? await socket?.ack(token, []) }
        guard let room, room.mode == .live, room.isActive, let payload = event.args.first else { return }
        let arrival: BackendArrival
        if event.name == "overlay" || event.name == "ex-overlay" {
            guard let overlay = await overlayArrived(payload, receivedAt: Timestamp.nowMs(), room: room) else { return }
            arrival = overlay
        } else {
            arrival = .event(event)
        }
        guard !statusGate.admit(arrival, isOverlay: arrival.isOverlay) else { return await dispatch(arrival) }
        guard statusGate.overflowed else { return }
        if statusGate.isWaiting {
            log.warning("Interactive status still pending with \(statusGate.heldCount) backend events waiting; not waiting for it",
                        ["INTERACTIVE_MEDIA_ID": room.mediaId])
            statusGate.release()
            await drainHeld()
        } else if drainingHeld {
            // The stream waits for the held events to be handed back (local work, never REST).
            await withCheckedContinuation { drainWaiters.append($0) }
        }
    }

    /// Handles an event from the backend, now or after the interactive status.
    private func dispatch(_ arrival: BackendArrival) async {
        let event: SocketIOEvent
        switch arrival {
        case .overlay(let overlay, let receivedAt, let room):
            return await route(overlay, receivedAt: receivedAt, room: room)
        case .event(let held):
            event = held
        }
        guard let room, room.mode == .live, room.isActive, let payload = event.args.first else { return }
        switch event.name {
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

    /// An overlay arrived: its trace lock is told at once; its routing may wait for the
    /// interactive status. The room may change meanwhile: the overlay stays this room's.
    private func overlayArrived(_ payload: JSONValue, receivedAt: Int64, room: Room) async -> BackendArrival? {
        guard let overlay = IncomingOverlay(payload: payload) else {
            log.warning("Ignoring an overlay without timelineId, or with a timeline or tracking id over \(IncomingOverlay.maxIdBytes) bytes",
                        ["INTERACTIVE_MEDIA_ID": room.mediaId])
            return nil
        }
        if overlay.traceLock, let socket {
            // Sent with or without a tracking id: the lock is the timeline's, not tracking's.
            try? await socket.emit("receive-message", [[
                "trackingId": JSONValue(overlay.trackingId), "timelineId": .string(overlay.timelineId),
                "mediaId": .string(room.mediaId), "socketId": JSONValue(core.socketId), "receivedAt": .number(Double(receivedAt)),
            ]])
        }
        return .overlay(overlay, receivedAt: receivedAt, room: RoomKey(mediaId: room.mediaId, mode: .live))
    }

    // MARK: Player

    /// `player.state` in a live room: forwarded to the backend as `ckst`.
    func playerState(state: String, position: Double?) async {
        guard let room, room.mode == .live, room.isActive, let socket else { return }
        try? await socket.emit("ckst", [["mediaId": .string(room.mediaId), "state": .string(state), "position": JSONValue(position)]],
                               whenDisconnected: .fail)
    }
}

/// An event from the backend as the room handles it: an overlay (parsed at arrival, of the room
/// it arrived in) or any other event (checked against the room when handled).
enum BackendArrival {
    case overlay(IncomingOverlay, receivedAt: Int64, room: RoomKey)
    case event(SocketIOEvent)

    var isOverlay: Bool {
        if case .overlay = self { return true }
        return false
    }
}
