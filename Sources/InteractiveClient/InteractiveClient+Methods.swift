import IPCProtocol
import JSONValue

/// Typed calls for what a player does most (docs/ipc.md has every method; `call(_:timeout:)`
/// takes the typed params of any of them).
extension InteractiveClient {
    /// Calls the method of `params` and reads the reply as its typed result (`IPCProtocol`'s
    /// `MethodParams`); a result that does not read is `IPCClientError.protocolViolation`.
    public func call<Params: MethodParams>(_ params: Params, timeout: Duration? = nil) async throws -> Params.Result {
        try IPCClient.decode(Params.self, try await call(Params.method, params.params, timeout: timeout))
    }

    /// `daemon.hello`: the daemon, its protocol, the boot id and the caller's role.
    public func hello(client name: String) async throws -> HelloResult {
        try await call(HelloParams(client: name))
    }

    /// `daemon.status`: the whole state (connection, room, session, overlays on screen, …).
    public func status() async throws -> JSONValue {
        try await call(DaemonStatusParams()).json
    }

    /// `session.login`: the viewer's token (never logged by the daemon), id and name.
    public func login(token: String, userId: String, displayName: String) async throws -> SessionState {
        try await call(SessionLoginParams(token: token, userId: userId, displayName: displayName))
    }

    /// `session.logout`.
    public func logout() async throws -> SessionState {
        try await call(SessionLogoutParams())
    }

    /// `room.join`: a live room (replies once joined, or `joining` after `timeoutMs`) or a VOD
    /// one (replies once its scenario is loaded).
    public func join(mediaId: String, mode: RoomMode = .live, fanclub: Bool = false, timeoutMs: Int? = nil)
        async throws -> RoomJoinResult
    {
        try await call(RoomJoinParams(mediaId: mediaId, mode: mode, fanclub: fanclub, timeoutMs: timeoutMs))
    }

    /// `room.leave`.
    public func leave() async throws {
        _ = try await call(RoomLeaveParams())
    }

    /// `overlay.attached`: the web view of `overlayId` exists and started loading. This
    /// connection owns the overlay from now on.
    public func overlayAttached(_ overlayId: String) async throws {
        _ = try await call(OverlayAttachedParams(overlayId: overlayId))
    }

    /// `overlay.rendered`: the page loaded, or failed to (`reason` says why). Returns whether the
    /// report was recorded (only the first one is).
    @discardableResult
    public func overlayRendered(_ overlayId: String, loaded: Bool, reason: String? = nil) async throws -> Bool {
        try await call(OverlayRenderedParams(overlayId: overlayId, status: loaded ? .loaded : .failed, reason: reason)).recorded
    }

    /// `overlay.bridge`: forwards, unchanged, what the page posted through the `IOS` bridge
    /// (the JSON text it passed to `postMessage`).
    @discardableResult
    public func overlayBridge(_ overlayId: String, posted text: String) async throws -> BridgeResult {
        try await overlayBridge(overlayId, message: .string(text))
    }

    /// `overlay.bridge` with the message as an object `{type, data}`.
    @discardableResult
    public func overlayBridge(_ overlayId: String, message: JSONValue) async throws -> BridgeResult {
        guard let params = OverlayBridgeParams(overlayId: overlayId, message: message) else {
            // Sent as it is: the daemon's reply says what is wrong with it.
            return try IPCClient.decode(OverlayBridgeParams.self,
                                        try await call(.overlayBridge, ["overlayId": .string(overlayId), "message": message]))
        }
        return try await call(params)
    }

    /// `overlay.dismiss`: the viewer closed the overlay.
    public func overlayDismiss(_ overlayId: String) async throws {
        _ = try await call(OverlayDismissParams(overlayId: overlayId))
    }

    /// `answer.confirm`: the viewer's answer to an `answer.confirm` event (a bet deduction).
    public func confirmAnswer(overlayId: String, accept: Bool) async throws {
        _ = try await call(AnswerConfirmParams(overlayId: overlayId, accept: accept))
    }

    /// `predict.open`: the viewer chose a predict/lucky button; its dialog is shown.
    @discardableResult
    public func predictOpen(timelineId: String) async throws -> JSONValue {
        try await call(PredictOpenParams(timelineId: timelineId)).json
    }

    /// `player.time` as a notification: the playback position (drives VOD overlays).
    public func playerTime(_ seconds: Double) throws {
        try notify(IPCMethod.playerTime.rawValue, PlayerTimeParams(seconds: seconds).params)
    }

    /// `player.state`: `playing`, `paused`, `buffering` or `ended`.
    public func playerState(_ state: String, position: Double? = nil) async throws {
        guard let activity = PlayerActivity(rawValue: state) else {
            // Sent as it is: the daemon's reply says what is wrong with it.
            _ = try await call(.playerState, ["state": .string(state)])
            return
        }
        _ = try await call(PlayerStateParams(state: activity, position: position))
    }

    /// `player.viewport`: the video area's size in pixels.
    public func playerViewport(width: Int, height: Int) async throws {
        _ = try await call(Viewport(width: width, height: height))
    }
}
