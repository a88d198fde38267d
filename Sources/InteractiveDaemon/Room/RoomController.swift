import IPCProtocol
import JSONValue
import Runtime
import SocketIO

/// The orchestrator: owns the viewer session, the room and its state machine (none → joining →
/// joined → left or error), the live connection, and routes what the backend sends to the
/// overlay and predict managers. Live specifics are in RoomController+Live.swift, VOD in
/// RoomController+VOD.swift.
@LoopActor
final class RoomController {

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
    /// The token the live connection's last attempt offered (nil: anonymous). Secret.
    var offeredToken: String?
    /// The backend's interactive status, requested with each join-room: the backend's events
    /// wait in it from the first overlay on, so a timeline answered elsewhere is not shown right
    /// at the join (RoomController+Live.swift).
    var statusGate = InteractiveStatusGate<BackendArrival>()
    /// The interactive status request under way, until its reply (or failure) came: the gate
    /// may stop waiting for it sooner (`statusWaitMs`); while it is under way, a restored room's
    /// join has not settled.
    var statusInFlight: Int?
    /// The room being left now: what the backend sends for it meanwhile is dropped, so that none
    /// of it (a predict button, a result) reaches the next room.
    var leavingRoom: RoomKey?
    /// The join-room acks and status requests, run as child tasks of `run()`.
    let work = ChildTasks()

    /// The kept room being joined again at start, until its join settled (RoomController+Recovery.swift).
    var restoreAttempt: Room?

    /// emit-ack tracking of live overlays.
    let tracking: Tracker
    // VOD state (RoomController+VOD.swift).
    var vod: VODPlayback?

    init(bus: EventBus, log: Logger, store: Store, overlays: OverlayManager, predict: PredictManager, tracking: Tracker,
         settings: Settings, playback: PlaybackManager) {
        self.tracking = tracking
        self.playback = playback
        self.predict = predict
        self.bus = bus
        self.log = log
        self.store = store
        self.overlays = overlays
        self.settings = settings
        bus.setStatus("session", session.publicState.json, observerValue: session.publicState.observed.json)
        bus.setStatus("room", .null)
        bus.setStatus("overlays", .array([]))
        bus.setStatus("predict", .array([]))
        predict.setTenant(settings.tenant)
        publishConnection(ConnectionStateEvent(state: "idle"), event: false)
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

    /// The backend refused `token` (`source`: which call): the session is expired, unless the
    /// viewer logged in again since.
    func sessionRefused(token: String, source: String) {
        // Said at once, in the turn that learned it (an expiry keeps nothing and reconnects nothing).
        for effect in sessionCore.refused(token: token, source: source) { _ = performNow(effect) }
    }

    /// The session kept from the previous run (RoomController+Recovery.swift), before any room.
    func restore(session kept: ViewerSession?) async {
        await perform(sessionCore.restore(kept, room: room))
    }

    /// Performs what the session core decided, in order.
    private func perform(_ effects: [SessionEffect]) async {
        for effect in effects where !performNow(effect) {
            switch effect {
            case .keep:
                await keepSession(sessionCore.kept)
            case .reconnectLive(let reason):
                await reconnectLive(reason: reason)
            case .log, .loginRequired, .publish, .playback:
                break
            }
        }
    }

    /// Performs an effect that takes no wait; false for one that does (the caller awaits it).
    private func performNow(_ effect: SessionEffect) -> Bool {
            switch effect {
            case .log(.loggedIn(let userId)):
                log.info("Viewer \(userId) logged in", ["INTERACTIVE_USER_ID": userId])
            case .log(.loggedOut(let previous)):
                log.info("Viewer \(previous ?? "(anonymous)") logged out", previous.map { ["INTERACTIVE_USER_ID": $0] } ?? [:])
            case .log(.restored(let userId)):
                log.info("Viewer session restored", userId.map { ["INTERACTIVE_USER_ID": $0] } ?? [:])
            case .log(.expired(let userId, let source)):
                log.warning("The backend refused the session of viewer \(userId ?? "(unknown)") (\(source)): log in again",
                            userId.map { ["INTERACTIVE_USER_ID": $0] } ?? [:], id: .sessionExpired)
            case .loginRequired:
                bus.publish(LoginRequiredEvent.expired)
            case .publish:
                let state = session.publicState
                bus.publish(state, section: "session", status: state.json, observerEvent: state.observed,
                            observerStatus: state.observed.json)
                overlays.setContext(roomContext)
            case .playback:
                playback.sessionChanged(session)
            case .keep, .reconnectLive:
                return false
            }
            return true
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
            setRoom(updated)
            await keepRoom()
        case .enter(let fresh, let leaving):
            if let leaving { await leaveRoom(leaving, nextMode: mode) }
            setRoom(fresh)
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
        leavingRoom = current.key
        defer { leavingRoom = nil }
        // Overlays first, so that their tracking sessions close on the connection still open.
        overlays.removeAll()
        predict.removeAll()
        switch current.mode {
        case .live: await leaveLive(current, keepSocket: nextMode == .live)
        case .vod: vod = nil
        }
        setRoom(RoomCore.left(current))
    }

    /// Publishes a room change, updates the overlay context and wakes `room.join` callers.
    func setRoom(_ updated: Room) {
        var effects: [RoomEffect] = []
        core.set(updated, into: &effects)
        perform(effects)
    }

    /// Performs what the room core decided, in order.
    func perform(_ effects: [RoomEffect]) {
        for effect in effects {
            switch effect {
            case .room(let updated, let changed):
                overlays.setContext(roomContext)
                if changed { bus.publish(updated.event, section: "room", status: updated.json) }
                if updated.state != .joining {
                    for waiter in joinWaiters.values { waiter.resume() }
                    joinWaiters.removeAll()
                }
                settleRestoreAttempt()
            case .connection(let state):
                publishConnection(state)
            case .context:
                overlays.setContext(roomContext)
            case .transport(let connected):
                tracking.setTransport(connected ? socket.map { LiveAckTransport(socket: $0) } : nil)
            case .sendJoin:
                sendJoin()
            case .log(let line):
                write(line)
            }
        }
    }

    /// Waits until the room is no longer joining, or `timeoutMs` (nil: without a limit).
    private func waitForRoom(timeoutMs: Int?) async {
        guard room?.state == .joining else { return }
        let id = nextWaiter
        nextWaiter += 1
        let timer = timeoutMs.map { timeout in EventLoop.shared.schedule(after: .milliseconds(timeout)) { [weak self] in self?.wakeWaiter(id) } }
        await withCheckedContinuation { joinWaiters[id] = $0 }
        if let timer { EventLoop.shared.cancel(timer) }
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
        if updated.deviceClass != settings.deviceClass { tracking.updateDeviceClass(updated.deviceClass) }
        if (updated.viewportWidth, updated.viewportHeight) != (settings.viewportWidth, settings.viewportHeight) {
            tracking.updateViewport(width: updated.viewportWidth, height: updated.viewportHeight)
        }
        let rememberChanged = updated.rememberSession != settings.rememberSession
        settings = updated
        if rememberChanged { await keepSession(sessionCore.kept) }
        predict.setTenant(updated.tenant)
        overlays.setContext(roomContext)
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
            if case .refused = error, let token = api.requester.token { sessionRefused(token: token, source: "interactive status") }
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
    func route(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) {
        switch overlay.kind {
        case .minigame: overlays.offer(overlay, receivedAt: receivedAt, room: room)
        case .predict, .lucky: predict.offer(overlay, receivedAt: receivedAt, room: room)
        }
    }

    /// `player.viewport`: the video area, for tracking's clientContext.
    func playerViewport(width: Int, height: Int) {
        tracking.updateViewport(width: width, height: height)
    }

    /// A local connection went away: overlays it owned are hidden.
    func clientDisconnected(_ connection: Int) {
        overlays.clientDisconnected(connection)
    }

    /// Stops the room for a daemon shutdown: leaves the live room and closes the connection.
    func shutdown() async {
        if let room, room.mode == .live, room.isActive { await leaveLive(room, keepSocket: false) }
        await endRestoreAttempt()
    }

    func publishConnection(_ state: ConnectionStateEvent, event: Bool = true) {
        if event {
            bus.publish(state, section: "connection", status: state.data)
        } else {
            bus.setStatus("connection", state.data)
        }
    }
}
