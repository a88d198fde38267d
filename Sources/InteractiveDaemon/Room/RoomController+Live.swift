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
            if socket.isConnected {
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
        setRoom(current)
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
        if let socket, socket.isConnected {
            _ = try? socket.emit("leave-room", [["mediaId": .string(current.mediaId), "userId": JSONValue(session.userId)]],
                             whenDisconnected: .fail)
        }
        core.leftOnConnection(current.mediaId)
        guard !keepSocket else { return }
        await tracking.drain(within: Self.ackDrainLimit)
        await closeSocket()
    }

    private func openSocket(_ wanted: LiveSocketSettings) {
        socketGeneration += 1
        let generation = socketGeneration
        let log = self.log
        // What the connection says reaches the room on the loop, as it is decoded: a state
        // change or an event is handled before the next one is read.
        let client = SocketIOClient(
            configuration: wanted.configuration,
            credentials: { [weak self] in self?.credentials(wanted) ?? wanted.credentials(for: .anonymous) },
            log: { level, message in
                switch level {
                case .error: log.error("Socket.IO: \(message)")
                case .warning: log.warning("Socket.IO: \(message)")
                case .info: log.info("Socket.IO: \(message)")
                case .debug: log.debug("Socket.IO: \(message)")
                }
            },
            handler: { [weak self] update in self?.socketUpdate(update, generation: generation) })
        socket = client
        socketSettings = wanted
        if wanted.tls.insecure { log.warning("insecureTLS is on: the backend's certificate is not verified (development only)") }
        client.connect()
    }

    func closeSocket() async {
        guard let closing = socket else { return }
        tracking.setTransport(nil)
        socketGeneration += 1
        socket = nil
        socketSettings = nil
        core.connectionClosed()
        statusGate.reset()
        publishConnection(ConnectionStateEvent(state: "idle"))
        await closing.disconnect()
    }

    private func credentials(_ wanted: LiveSocketSettings) -> SocketIOCredentials {
        offeredToken = session.token
        return wanted.credentials(for: session)
    }

    // MARK: What the connection says

    /// A state change or a server event of the connection of `generation` (a replaced
    /// connection's are dropped).
    private func socketUpdate(_ update: SocketIOClientUpdate, generation: Int) {
        guard generation == socketGeneration else { return }
        switch update {
        case .state(let state): socketStateChanged(state)
        case .event(let event): socketEvent(event)
        case .carried(let mark): tracking.carried(upTo: mark)
        }
    }

    private func socketStateChanged(_ state: SocketIOConnectionState) {
        guard let event = Self.linkEvent(state) else { return }
        perform(core.link(event, now: .now))
        // A CONNECT_ERROR refusing a connection that carried the viewer's token is the token's.
        if case .refused = event, let offeredToken { sessionRefused(token: offeredToken, source: "live connection") }
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
            self?.joinAcknowledged(mediaId: current.mediaId, socketId: socketId, acked: acked, generation: generation)
        }
    }

    private func joinAcknowledged(mediaId: String, socketId: String, acked: Bool, generation: Int) {
        guard generation == socketGeneration else { return }
        perform(core.joinAcknowledged(mediaId: mediaId, socketId: socketId, acked: acked))
    }

    /// Requests the backend's answered timelines for this viewer (so they are not shown again),
    /// off the display path: the backend's events wait in `statusGate` until the reply or the
    /// failure comes back (`interactiveStatusArrived`), for `statusWaitMs` at most
    /// (`statusWaitElapsed`). A viewer not logged in has none to wait for.
    private func requestInteractiveStatus(mediaId: String) {
        guard session.isLoggedIn, let api = try? BackendAPI(settings: settings, token: session.token) else {
            if statusGate.pendingRequest != nil {
                statusGate.release()
                drainHeld()
            }
            return
        }
        let request = statusGate.request()
        statusInFlight = request
        let log = self.log
        let viewer = session.answeredBucket
        let started = ContinuousClock.now
        let wait = Duration.milliseconds(settings.statusWaitMs)
        EventLoop.shared.schedule(at: started + wait) { [weak self] in self?.statusWaitElapsed(request, mediaId: mediaId, wait: wait) }
        work.start { [weak self] in
            var answered: [String] = []
            do throws(BackendCallError) {
                answered = try await api.interactiveStatus(mediaId: mediaId).answered
            } catch {
                log.warning("Interactive status unavailable: \(error)", ["INTERACTIVE_MEDIA_ID": mediaId])
                if case .refused = error, let token = api.requester.token {
                    self?.sessionRefused(token: token, source: "interactive status")
                }
            }
            self?.interactiveStatusArrived(request, answered: answered, viewer: viewer, mediaId: mediaId,
                                           after: started.duration(to: .now))
        }
    }

    /// The status of `request` came (or failed) `elapsed` after it was asked for: its answered
    /// timelines count for `viewer` in `mediaId` only (a late reply of another room or viewer
    /// changes nothing), a restored room's join may settle, and the events held for it are
    /// handed back.
    private func interactiveStatusArrived(_ request: Int, answered: [String], viewer: String, mediaId: String,
                                          after elapsed: Duration) {
        overlays.addAnswered(answered, viewer: viewer, mediaId: mediaId)
        if statusInFlight == request { statusInFlight = nil }
        let waiting = statusGate.heldCount
        if statusGate.arrived(request) {
            log.info("Interactive status of \(mediaId) arrived after \(BackendOutage.milliseconds(elapsed)) ms; "
                     + "\(waiting) backend events waited for it", ["INTERACTIVE_MEDIA_ID": mediaId])
            drainHeld()
        }
        settleRestoreAttempt()
    }

    /// `statusWaitMs` passed since `request`: if it is still pending, the events do not wait for
    /// it any longer (its answered timelines still count when it comes).
    private func statusWaitElapsed(_ request: Int, mediaId: String, wait: Duration) {
        guard statusGate.pendingRequest == request, statusGate.isWaiting else { return }
        log.info("Interactive status of \(mediaId) not there after \(BackendOutage.milliseconds(wait)) ms (statusWaitMs): "
                 + "\(statusGate.heldCount) backend events go on without it", ["INTERACTIVE_MEDIA_ID": mediaId])
        statusGate.release()
        drainHeld()
    }

    /// Hands back the events held for the interactive status, in order.
    private func drainHeld() {
        while let next = statusGate.next() { dispatch(next) }
    }

    // MARK: Server events

    private func socketEvent(_ event: SocketIOEvent) {
        if let token = event.ackToken { try? socket?.ack(token, []) }
        // Each event belongs to the server room it was sent for (`RoomCore.eventsRoom`): after a
        // media change on this connection, what arrives before the new room's join-room ack is
        // the old room's, and is never shown or answered in the new one.
        guard let room, room.mode == .live, room.isActive, let arrivalRoom = core.arrivalRoom, let payload = event.args.first else { return }
        let arrival: BackendArrival
        if event.name == "overlay" || event.name == "ex-overlay" {
            guard let overlay = overlayArrived(payload, byteBound: event.byteCount, text: { event.argumentText(0, member: $0) },
                                               receivedAt: Timestamp.nowMs(), room: arrivalRoom) else {
                return
            }
            arrival = overlay
        } else {
            arrival = .event(event, room: arrivalRoom)
        }
        guard !statusGate.admit(arrival, isOverlay: arrival.isOverlay) else { return dispatch(arrival) }
        guard statusGate.overflowed, statusGate.isWaiting else { return }
        log.warning("Interactive status still pending with \(statusGate.heldCount) backend events waiting; not waiting for it",
                    ["INTERACTIVE_MEDIA_ID": room.mediaId])
        statusGate.release()
        drainHeld()
    }

    /// Handles an event from the backend, now or after the interactive status.
    private func dispatch(_ arrival: BackendArrival) {
        let event: SocketIOEvent
        switch arrival {
        case .overlay(let overlay, let receivedAt, let room):
            return route(overlay, receivedAt: receivedAt, room: room)
        case .event(let held, let arrivedIn):
            guard room?.key == arrivedIn, leavingRoom != arrivedIn else {
                log.debug("Dropping backend event \(held.name) of room \(arrivedIn.mediaId), which is left")
                return
            }
            event = held
        }
        guard let room, room.mode == .live, room.isActive, let payload = event.args.first else { return }
        switch event.name {
        case "update-result":
            guard let timelineId = payload["timelineId"]?.idString else { return }
            overlays.post(timelineId: timelineId, key: "UPDATE_DATA_INTERACTIVE", data: payload["data"] ?? .null)
        case "recall-overlay":
            guard let timelineId = payload["timelineId"]?.idString else { return }
            overlays.recall(timelineId: timelineId)
            predict.recall(timelineId: timelineId)
        case "predict-result":
            predict.result(payload)
        case "action-button-predict":
            predict.buttonData(payload)
        default:
            log.debug("Ignoring backend event \(event.name)")
        }
    }

    /// An overlay arrived for `room`: its trace lock is told at once; its routing may wait for
    /// the interactive status. The room may change meanwhile: the overlay stays this room's.
    private func overlayArrived(_ payload: JSONValue, byteBound: Int?, text: (String?) -> ArraySlice<UInt8>?, receivedAt: Int64,
                                room: RoomKey) -> BackendArrival? {
        guard let overlay = IncomingOverlay(payload: payload, byteBound: byteBound, text: text) else {
            log.warning("Ignoring an overlay without timelineId, or with a timeline or tracking id over \(IncomingOverlay.maxIdBytes) bytes",
                        ["INTERACTIVE_MEDIA_ID": room.mediaId])
            return nil
        }
        if overlay.traceLock, let socket {
            // Sent with or without a tracking id: the lock is the timeline's, not tracking's.
            _ = try? socket.emit("receive-message", [[
                "trackingId": JSONValue(overlay.trackingId), "timelineId": .string(overlay.timelineId),
                "mediaId": .string(room.mediaId), "socketId": JSONValue(core.socketId), "receivedAt": .number(Double(receivedAt)),
            ]])
        }
        return .overlay(overlay, receivedAt: receivedAt, room: room)
    }

    // MARK: Player

    /// `player.state` in a live room: forwarded to the backend as `ckst`.
    func playerState(state: String, position: Double?) {
        guard let room, room.mode == .live, room.isActive, let socket else { return }
        _ = try? socket.emit("ckst", [["mediaId": .string(room.mediaId), "state": .string(state), "position": JSONValue(position)]],
                               whenDisconnected: .fail)
    }
}

/// An event from the backend as the room handles it, with the room it arrived in
/// (`RoomCore.eventsRoom`): an overlay (parsed at arrival) or any other event (dropped when
/// handled if that room is no longer the current one, or is being left).
enum BackendArrival {
    case overlay(IncomingOverlay, receivedAt: Int64, room: RoomKey)
    case event(SocketIOEvent, room: RoomKey)

    var isOverlay: Bool {
        if case .overlay = self { return true }
        return false
    }
}
