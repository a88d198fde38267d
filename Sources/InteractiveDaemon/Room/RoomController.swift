import IPCProtocol
import JSONValue
import Runtime
import SocketIO

/// The orchestrator: owns the viewer session, the room and its state machine (none → joining →
/// joined → left or error), the live connection, and routes what the backend sends to the
/// overlay and predict managers. Live specifics are in RoomController+Live.swift, VOD in
/// RoomController+VOD.swift.
actor RoomController {
    /// Pinned to the event loop: the display path runs on one thread, without a hop.
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }

    let bus: EventBus
    let log: Logger
    let store: Store
    let overlays: OverlayManager
    let predict: PredictManager
    /// Told of every login and logout: prefetched play tickets belong to one viewer.
    let playback: PlaybackManager
    var settings: Settings
    /// The viewer's session and what a login or logout does (SessionCore.swift).
    private var sessionCore = SessionCore()
    var session: ViewerSession { sessionCore.session }
    /// The room and the live connection's state (RoomCore.swift).
    var core = RoomCore()
    var room: Room? { core.room }
    /// Callers of `room.join` waiting for the room to settle.
    private var joinWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    // Live connection state (RoomController+Live.swift).
    var socket: SocketIOClient?
    var socketSettings: LiveSocketSettings?
    var socketGeneration = 0
    var socketTasks: [Task<Void, Never>] = []
    /// The backend's interactive status, requested with each join-room: the backend's events
    /// wait in it from the first overlay on, so a timeline answered elsewhere is not shown right
    /// at the join (RoomController+Live.swift).
    var statusGate = InteractiveStatusGate<BackendArrival>()
    /// Whether held events are being handed back, and the event stream waiting for that to end.
    var drainingHeld = false
    var drainWaiters: [CheckedContinuation<Void, Never>] = []
    /// The connection attempts, join-room acks and status requests, run as child tasks of `run()`.
    let work = ChildTasks(preferring: EventLoop.shared.taskExecutor)

    /// emit-ack tracking of live overlays.
    let tracking: TrackingService
    // VOD state (RoomController+VOD.swift).
    var vod: VODPlayback?

    init(bus: EventBus, log: Logger, store: Store, overlays: OverlayManager, predict: PredictManager, tracking: TrackingService,
         settings: Settings, playback: PlaybackManager) async {
        self.tracking = tracking
        self.playback = playback
        self.predict = predict
        self.bus = bus
        self.log = log
        self.store = store
        self.overlays = overlays
        self.settings = settings
        await bus.setStatus("session", session.publicState.json)
        await bus.setStatus("room", .null)
        await bus.setStatus("overlays", .array([]))
        await bus.setStatus("predict", .array([]))
        await predict.setTenant(settings.tenant)
        await publishConnection(ConnectionStateEvent(state: "idle"), event: false)
    }

    /// Runs the room's background work (connecting, join-room acks, interactive status
    /// requests) until cancelled.
    func run() async {
        await work.run()
    }

    // MARK: Session

    /// `session.login`: a live room reconnects so that the socket carries the new token.
    func login(token: String, userId: String, displayName: String?) async -> JSONValue {
        await perform(sessionCore.login(token: token, userId: userId, displayName: displayName, room: room))
        return session.publicState.json
    }

    /// `session.logout`: back to an anonymous viewer.
    func logout() async -> JSONValue {
        await perform(sessionCore.logout(room: room))
        return session.publicState.json
    }

    /// The session kept from the previous run (RoomController+Recovery.swift), before any room.
    func restore(session kept: ViewerSession?) async {
        await perform(sessionCore.restore(kept, room: room))
    }

    /// Performs what the session core decided, in order.
    private func perform(_ effects: [SessionEffect]) async {
        for effect in effects {
            switch effect {
            case .log(.loggedIn(let userId)):
                log.info("Viewer \(userId) logged in", ["INTERACTIVE_USER_ID": userId])
            case .log(.loggedOut(let previous)):
                log.info("Viewer \(previous ?? "(anonymous)") logged out", previous.map { ["INTERACTIVE_USER_ID": $0] } ?? [:])
            case .log(.restored(let userId)):
                log.info("Viewer session restored", userId.map { ["INTERACTIVE_USER_ID": $0] } ?? [:])
            case .keep:
                await keepSession(sessionCore.kept)
            case .publish:
                let state = session.publicState
                await bus.publish(state, section: "session", status: state.json)
                await overlays.setContext(roomContext)
            case .playback:
                await playback.sessionChanged(session)
            case .reconnectLive(let reason):
                await reconnectLive(reason: reason)
            }
        }
    }

    // MARK: Room

    /// `room.join`. Live: waits up to `timeoutMs` for the server room; VOD: until the scenario loaded.
    func join(mediaId: String, mode: RoomMode, fanclub: Bool, timeoutMs: Int) async throws(RPCError) -> JSONValue {
        try await enter(mediaId: mediaId, mode: mode, fanclub: fanclub)
        await waitForRoom(timeoutMs: mode == .live ? timeoutMs : nil)
        guard let room, room.mediaId == mediaId else { return RoomJoinResult(mediaId: nil, mode: nil, state: "left").json }
        if room.state == .error, let error = room.error { throw error }
        return RoomJoinResult(mediaId: mediaId, mode: mode.rawValue, state: room.state.rawValue).json
    }

    /// Enters the room (Room rules): leaves another one first, or takes a changed `fanclub` in
    /// place; returns without waiting for the room to be joined. The room is kept for a restart.
    func enter(mediaId: String, mode: RoomMode, fanclub: Bool) async throws(RPCError) {
        switch core.entry(mediaId: mediaId, mode: mode, fanclub: fanclub,
                          missing: mode == .live ? settings.missingForLive : settings.missingForVOD) {
        case .notConfigured(let missing):
            throw RPCError.daemon(.notConfigured, "\(mode.rawValue) mode needs configuration: \(missing.joined(separator: ", "))",
                                  extra: ["missing": .array(missing.map(JSONValue.string))])
        case .stay(nil):
            return
        case .stay(let updated?):
            await setRoom(updated)
            await keepRoom()
        case .enter(let fresh, let leaving):
            if let leaving { await leaveRoom(leaving, nextMode: mode) }
            await setRoom(fresh)
            log.info("Joining room \(mediaId) (\(mode.rawValue))", ["INTERACTIVE_MEDIA_ID": mediaId, "INTERACTIVE_MODE": mode.rawValue])
            await keepRoom()
            switch mode {
            case .live: await startLive()
            case .vod: await startVOD()
            }
        }
    }

    /// `room.leave`: leaves and hides every overlay.
    func leave() async throws(RPCError) -> JSONValue {
        guard let current = core.leaving else { throw RPCError.daemon(.noRoom, "no room is joined") }
        await leaveRoom(current, nextMode: nil)
        await keepRoom()
        return RoomLeaveResult(mediaId: current.mediaId).json
    }

    private func leaveRoom(_ current: Room, nextMode: RoomMode?) async {
        log.info("Leaving room \(current.mediaId) (\(current.mode.rawValue))", ["INTERACTIVE_MEDIA_ID": current.mediaId], id: .roomLeft)
        // Overlays first, so that their tracking sessions close on the connection still open.
        await overlays.removeAll()
        await predict.removeAll()
        switch current.mode {
        case .live: await leaveLive(current, keepSocket: nextMode == .live)
        case .vod: vod = nil
        }
        await setRoom(RoomCore.left(current))
    }

    /// Publishes a room change, updates the overlay context and wakes `room.join` callers.
    func setRoom(_ updated: Room) async {
        var effects: [RoomEffect] = []
        core.set(updated, into: &effects)
        await perform(effects)
    }

    /// Performs what the room core decided, in order.
    func perform(_ effects: [RoomEffect]) async {
        for effect in effects {
            switch effect {
            case .room(let updated, let changed):
                await overlays.setContext(roomContext)
                if changed { await bus.publish(updated.event, section: "room", status: updated.json) }
                if updated.state != .joining {
                    for waiter in joinWaiters.values { waiter.resume() }
                    joinWaiters.removeAll()
                }
            case .connection(let state):
                await publishConnection(state)
            case .context:
                await overlays.setContext(roomContext)
            case .transport(let connected):
                await tracking.setTransport(connected ? socket.map(LiveAckTransport.init) : nil)
            case .sendJoin:
                sendJoin()
            case .log(let line):
                write(line)
            }
        }
    }

    private func waitForRoom(timeoutMs: Int?) async {
        guard room?.state == .joining else { return }
        let id = nextWaiter
        nextWaiter += 1
        await withTaskGroup(of: Void.self) { group in
            if let timeoutMs {
                group.addTask {
                    await EventLoop.shared.sleep(for: .milliseconds(timeoutMs)) { await self.wakeWaiter(id) }
                }
            }
            await withCheckedContinuation { joinWaiters[id] = $0 }
            group.cancelAll()
        }
    }

    private func wakeWaiter(_ id: Int) { joinWaiters.removeValue(forKey: id)?.resume() }

    var roomContext: RoomContext? {
        guard let room, room.isActive else { return nil }
        return RoomContext(mediaId: room.mediaId, mode: room.mode, fanclub: room.fanclub, session: session, settings: settings,
                           socketId: room.mode == .live ? core.socketId : nil)
    }

    // MARK: Configuration

    /// New settings: contexts follow; a live connection whose parameters changed is rebuilt.
    func settingsChanged(_ updated: Settings) async {
        if updated.deviceClass != settings.deviceClass { await tracking.updateDeviceClass(updated.deviceClass) }
        if (updated.viewportWidth, updated.viewportHeight) != (settings.viewportWidth, settings.viewportHeight) {
            await tracking.updateViewport(width: updated.viewportWidth, height: updated.viewportHeight)
        }
        settings = updated
        await predict.setTenant(updated.tenant)
        await overlays.setContext(roomContext)
        if let room, room.mode == .live, room.isActive, LiveSocketSettings(updated) != socketSettings {
            await reconnectLive(reason: "configuration changed")
        }
    }

    // MARK: Backend queries

    /// `interactive.status`: the backend's interactive status for this viewer and media.
    func interactiveStatus(mediaId: String) async throws(RPCError) -> JSONValue {
        guard session.isLoggedIn else {
            throw RPCError.daemon(.notLoggedIn, "interactive.status is per viewer: log in first (session.login)")
        }
        let api = try BackendAPI(settings: settings, token: session.token)
        do {
            return try await api.interactiveStatus(mediaId: mediaId).reply
        } catch {
            throw error.rpcError()
        }
    }

    /// `leaderboard.url`: the page for this media, tenant and environment.
    func leaderboardURL(mediaId: String) throws(RPCError) -> JSONValue {
        var missing: [String] = []
        if settings.leaderboardURL == nil { missing.append("leaderboardUrl") }
        if settings.tenant == nil { missing.append("tenant") }
        guard let page = settings.leaderboardURL, let tenant = settings.tenant else {
            throw RPCError.daemon(.notConfigured, "leaderboard.url needs configuration: \(missing.joined(separator: ", "))",
                                  extra: ["missing": .array(missing.map(JSONValue.string))])
        }
        return LeaderboardURLResult(url: URLText.appendingQuery(page, [("mediaId", mediaId), ("tenant", tenant)])).json
    }

    // MARK: Players

    /// `predict.open`: the viewer tapped a predict/lucky button.
    func predictOpen(timelineId: String) async throws(RPCError) -> JSONValue {
        guard let room, room.isActive else { throw RPCError.daemon(.noRoom, "no room is joined") }
        return try await predict.open(timelineId: timelineId)
    }

    /// Routes an overlay that arrived in `room` by kind: minigames to the screen, predict and
    /// lucky to their buttons.
    func route(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) async {
        switch overlay.kind {
        case .minigame: await overlays.offer(overlay, receivedAt: receivedAt, room: room)
        case .predict, .lucky: await predict.offer(overlay, receivedAt: receivedAt, room: room)
        }
    }

    /// `player.viewport`: the video area, for tracking's clientContext.
    func playerViewport(width: Int, height: Int) async {
        await tracking.updateViewport(width: width, height: height)
    }

    /// A local connection went away: overlays it owned are hidden.
    func clientDisconnected(_ connection: Int) async {
        await overlays.clientDisconnected(connection)
    }

    /// Stops the room for a daemon shutdown: leaves the live room and closes the connection.
    func shutdown() async {
        if let room, room.mode == .live, room.isActive { await leaveLive(room, keepSocket: false) }
    }

    func publishConnection(_ state: ConnectionStateEvent, event: Bool = true) async {
        if event {
            await bus.publish(state, section: "connection", status: state.data)
        } else {
            await bus.setStatus("connection", state.data)
        }
    }
}
