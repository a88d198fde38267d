import IPCProtocol
import JSONValue

/// The connection a request came from.
struct ClientContext: Sendable {
    let id: Int
    let peer: PeerCredentials?
    let role: ClientRole
    let queue: OutboundQueue
}

/// Checks the caller's role and dispatches each method to the actor that owns its state.
struct RequestRouter: Sendable {
    let bus: EventBus
    let config: ConfigStore
    let rooms: RoomController
    let overlays: OverlayManager
    /// Tracking's feed: a status read waits until the events recorded before it were handled.
    let tracking: (any OverlayTracker)?
    let version: String

    /// What a handler produced.
    enum Outcome: Sendable {
        case result(JSONValue)
        /// The handler queued its reply itself (events.subscribe, to order it before replays).
        case queued
    }

    /// Handles one request or notification; returns the reply line to queue, if any.
    func handle(_ request: RPCRequest, from client: ClientContext) async -> [UInt8]? {
        let outcome: Result<Outcome, RPCError>
        do {
            outcome = .success(try await dispatch(request, from: client))
        } catch let error as RPCError {
            outcome = .failure(error)
        } catch let error as ConfigError {
            outcome = .failure(error.rpcError)
        } catch {
            outcome = .failure(.internalError(String(describing: error)))
        }
        guard let id = request.id else { return nil }
        switch outcome {
        case .success(.result(let result)): return RPCResponse(id: id, outcome: .success(result)).line()
        case .success(.queued): return nil
        case .failure(let error): return RPCResponse(id: id, outcome: .failure(error)).line()
        }
    }

    private func dispatch(_ request: RPCRequest, from client: ClientContext) async throws -> Outcome {
        guard let method = IPCMethod(rawValue: request.method) else {
            throw RPCError.methodNotFound(request.method)
        }
        if client.role == .observer && !method.isObserverAllowed {
            throw RPCError.daemon(.permissionDenied, "\(method.rawValue) needs the control role (root, the daemon's user or the privileged group)")
        }
        let params = try Params(request.params)
        switch method {
        case .daemonHello:
            _ = try params.optionalString("client")
            _ = try params.optionalInt("protocol", range: 0...Int(Int32.max))
            return .result([
                "daemon": "interactived", "version": .string(version), "protocol": .number(Double(ipcProtocolVersion)),
                "bootId": .string(bus.bootId), "role": .string(client.role.rawValue),
                "capabilities": .array(IPCMethod.allCases.map(\.rawValue).sorted().map(JSONValue.string)),
            ])
        case .daemonStatus:
            await tracking?.settled()
            return .result(await bus.snapshot())
        case .configGet:
            return .result(await config.effective())
        case .configSet:
            guard !params.members.isEmpty else { throw RPCError.invalidParams("give at least one configuration key") }
            return .result(try await config.set(params.members))
        case .sessionLogin:
            let token = try params.string("token")
            let userId = try params.string("userId")
            let displayName = try params.optionalString("displayName")
            return .result(await rooms.login(token: token, userId: userId, displayName: displayName))
        case .sessionLogout:
            return .result(await rooms.logout())
        case .eventsSubscribe:
            let prefixes = try params.optionalStringArray("types")
            let since = try params.optionalInt("since", range: 0...Int(Int32.max))
            let sinceBoot = try params.optionalString("bootId")
            guard let id = request.id else {
                throw RPCError.invalidRequest("events.subscribe must be a request with an id")
            }
            await bus.subscribe(connection: client.id, queue: client.queue, prefixes: prefixes, since: since,
                                sinceBootId: sinceBoot) { RPCResponse(id: id, outcome: .success($0)).line() }
            return .queued
        case .eventsUnsubscribe:
            await bus.unsubscribe(connection: client.id)
            return .result(["subscribed": false])
        case .roomJoin:
            let mediaId = try params.string("mediaId")
            let mode = RoomMode(rawValue: try params.oneOf("mode", ["live", "vod"], default: "live")) ?? .live
            let fanclub = try params.optionalBool("fanclub") ?? false
            let timeoutMs = try params.optionalInt("timeoutMs", range: 0...600_000) ?? 10_000
            return .result(try await rooms.join(mediaId: mediaId, mode: mode, fanclub: fanclub, timeoutMs: timeoutMs))
        case .roomLeave:
            return .result(try await rooms.leave())
        case .playerTime:
            let seconds = try params.number("seconds")
            guard seconds >= 0 else { throw RPCError.invalidParams("'seconds' must not be negative") }
            await rooms.playerTime(seconds)
            return .result(["seconds": .number(seconds)])
        case .playerState:
            let state = try params.oneOf("state", ["playing", "paused", "buffering", "ended"])
            await rooms.playerState(state: state, position: try params.optionalNumber("position"))
            return .result(["state": .string(state)])
        case .playerViewport:
            guard let width = try params.optionalInt("width", range: 1...100_000),
                  let height = try params.optionalInt("height", range: 1...100_000) else {
                throw RPCError.invalidParams("'width' and 'height' are required")
            }
            await rooms.playerViewport(width: width, height: height)
            return .result(["width": .number(Double(width)), "height": .number(Double(height))])
        case .overlayAttached:
            try await overlays.attached(try params.string("overlayId"), connection: try claimant(params, client))
            return .result(["ok": true])
        case .overlayRendered:
            let status = try params.oneOf("status", ["loaded", "failed"])
            let first = try await overlays.rendered(try params.string("overlayId"), loaded: status == "loaded",
                                                    reason: try params.optionalString("reason"), connection: try claimant(params, client))
            return .result(["recorded": .bool(first)])
        case .overlayBridge:
            let overlayId = try params.string("overlayId")
            guard let raw = params.members["message"], let message = BridgeMessage(raw) else {
                throw RPCError.invalidParams("'message' must be {type, data} or the JSON string the template posted")
            }
            return .result(try await overlays.bridge(overlayId, message: message, connection: try claimant(params, client)))
        case .overlayDismiss:
            try await overlays.dismiss(try params.string("overlayId"))
            return .result(["ok": true])
        case .answerConfirm:
            guard let accept = try params.optionalBool("accept") else { throw RPCError.invalidParams("'accept' is required") }
            try await overlays.confirm(try params.string("overlayId"), accept: accept)
            return .result(["ok": true])
        case .interactiveStatus:
            return .result(try await rooms.interactiveStatus(mediaId: try params.string("mediaId")))
        case .leaderboardURL:
            return .result(try await rooms.leaderboardURL(mediaId: try params.string("mediaId")))
        case .predictOpen:
            return .result(try await rooms.predictOpen(timelineId: try params.string("timelineId")))
        }
    }

    /// The connection that may become an overlay's owner: the caller, unless it said `claim: false`
    /// (a one-shot tool reporting on a player's behalf).
    private func claimant(_ params: Params, _ client: ClientContext) throws(RPCError) -> Int? {
        try params.optionalBool("claim") == false ? nil : client.id
    }
}
