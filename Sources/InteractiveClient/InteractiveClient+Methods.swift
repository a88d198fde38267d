import IPCProtocol
import JSONValue

/// Typed calls for what a player does most (docs/ipc.md has every method).
extension InteractiveClient {
    /// `daemon.hello`: the daemon, its protocol, the boot id and the caller's role.
    public func hello(client name: String) async throws -> HelloResult {
        let reply = try await call(.daemonHello, ["client": .string(name), "protocol": .number(Double(ipcProtocolVersion))])
        return try Self.decode(reply, IPCMethod.daemonHello, HelloResult.init(json:))
    }

    /// `daemon.status`: the whole state (connection, room, session, overlays on screen, …).
    public func status() async throws -> JSONValue {
        try await call(.daemonStatus)
    }

    /// `session.login`: the viewer's token (never logged by the daemon), id and name.
    public func login(token: String, userId: String, displayName: String) async throws -> SessionState {
        let reply = try await call(.sessionLogin, ["token": .string(token), "userId": .string(userId),
                                                   "displayName": .string(displayName)])
        return try Self.decode(reply, IPCMethod.sessionLogin, SessionState.init(json:))
    }

    /// `session.logout`.
    public func logout() async throws -> SessionState {
        try Self.decode(try await call(.sessionLogout), IPCMethod.sessionLogout, SessionState.init(json:))
    }

    /// `room.join`: a live room (replies once joined, or `joining` after `timeoutMs`) or a VOD
    /// one (replies once its scenario is loaded).
    public func join(mediaId: String, mode: RoomMode = .live, fanclub: Bool = false, timeoutMs: Int? = nil)
        async throws -> RoomJoinResult
    {
        var params: [String: JSONValue] = ["mediaId": .string(mediaId), "mode": .string(mode.rawValue), "fanclub": .bool(fanclub)]
        if let timeoutMs { params["timeoutMs"] = .number(Double(timeoutMs)) }
        return try Self.decode(try await call(.roomJoin, .object(params)), IPCMethod.roomJoin, RoomJoinResult.init(json:))
    }

    /// `room.leave`.
    public func leave() async throws {
        _ = try await call(.roomLeave)
    }

    /// `overlay.attached`: the web view of `overlayId` exists and started loading. This
    /// connection owns the overlay from now on.
    public func overlayAttached(_ overlayId: String) async throws {
        _ = try await call(.overlayAttached, ["overlayId": .string(overlayId)])
    }

    /// `overlay.rendered`: the page loaded, or failed to (`reason` says why). Returns whether the
    /// report was recorded (only the first one is).
    @discardableResult
    public func overlayRendered(_ overlayId: String, loaded: Bool, reason: String? = nil) async throws -> Bool {
        var params: [String: JSONValue] = ["overlayId": .string(overlayId), "status": loaded ? "loaded" : "failed"]
        if let reason { params["reason"] = .string(reason) }
        return try await call(.overlayRendered, .object(params))["recorded"]?.boolValue ?? false
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
        let reply = try await call(.overlayBridge, ["overlayId": .string(overlayId), "message": message])
        return try Self.decode(reply, IPCMethod.overlayBridge, BridgeResult.init(json:))
    }

    /// `overlay.dismiss`: the viewer closed the overlay.
    public func overlayDismiss(_ overlayId: String) async throws {
        _ = try await call(.overlayDismiss, ["overlayId": .string(overlayId)])
    }

    /// `answer.confirm`: the viewer's answer to an `answer.confirm` event (a bet deduction).
    public func confirmAnswer(overlayId: String, accept: Bool) async throws {
        _ = try await call(.answerConfirm, ["overlayId": .string(overlayId), "accept": .bool(accept)])
    }

    /// `predict.open`: the viewer chose a predict/lucky button; its dialog is shown.
    @discardableResult
    public func predictOpen(timelineId: String) async throws -> JSONValue {
        try await call(.predictOpen, ["timelineId": .string(timelineId)])
    }

    /// `player.time` as a notification: the playback position (drives VOD overlays).
    public func playerTime(_ seconds: Double) throws {
        try notify(IPCMethod.playerTime.rawValue, ["seconds": .number(seconds)])
    }

    /// `player.state`: `playing`, `paused`, `buffering` or `ended`.
    public func playerState(_ state: String, position: Double? = nil) async throws {
        var params: [String: JSONValue] = ["state": .string(state)]
        if let position { params["position"] = .number(position) }
        _ = try await call(.playerState, .object(params))
    }

    /// `player.viewport`: the video area's size in pixels.
    public func playerViewport(width: Int, height: Int) async throws {
        _ = try await call(.playerViewport, ["width": .number(Double(width)), "height": .number(Double(height))])
    }

    private static func decode<T>(_ reply: JSONValue, _ method: IPCMethod, _ make: (JSONValue) -> T?) throws -> T {
        guard let value = make(reply) else {
            throw IPCClientError.protocolViolation("\(method.rawValue) replied \(reply.jsonText.prefix(200))")
        }
        return value
    }
}
