import IPCProtocol
import JSONValue

/// The connection a request came from.
struct ClientContext: Sendable {
    let id: Int
    let peer: PeerCredentials?
    let role: ClientRole
    let queue: OutboundQueue

    /// Who the client is, for log messages: "uid 1000 pid 4242".
    var logDescription: String {
        guard let peer else { return "client \(id) (credentials unknown)" }
        return "uid \(peer.uid) pid \(peer.pid)"
    }

    /// The client's journal fields.
    var logFields: [String: String] {
        guard let peer else { return ["INTERACTIVE_CLIENT_ID": String(id)] }
        return ["INTERACTIVE_CLIENT_ID": String(id), "INTERACTIVE_CLIENT_PID": String(peer.pid),
                "INTERACTIVE_CLIENT_UID": String(peer.uid)]
    }
}

/// Checks the caller's role and dispatches each method to the actor that owns its state.
struct RequestRouter: Sendable {
    let bus: EventBus
    let config: ConfigStore
    /// Re-reads the configuration file for `daemon.reload`.
    let reloader: ConfigReloader
    let rooms: RoomController
    let overlays: OverlayManager
    let playback: PlaybackManager
    /// Tracking's feed: a status read waits until the events recorded before it were handled.
    let tracking: (any OverlayTracker)?
    let version: String
    let log: Logger

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
        case .success(.result(let result)): return RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .success(result)).line()
        case .success(.queued): return nil
        case .failure(let error): return RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .failure(error)).line()
        }
    }

    private func dispatch(_ request: RPCRequest, from client: ClientContext) async throws -> Outcome {
        guard let method = IPCMethod(rawValue: request.method) else {
            throw RPCError.methodNotFound(request.method)
        }
        if client.role == .observer && !method.isObserverAllowed {
            log.warning("Permission denied: \(client.logDescription) called \(method.rawValue), which needs the control role",
                        client.logFields.merging(["INTERACTIVE_METHOD": method.rawValue]) { $1 }, id: .permissionDenied)
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
        case .daemonReload:
            switch await reloader.reload() {
            case .success(let reload):
                return .result(["file": .string(config.filePath), "changed": .array(reload.changed.map(JSONValue.string)),
                                "restartNeeded": .array(reload.restartNeeded.map(JSONValue.string))])
            case .failure(let error):
                throw RPCError.daemon(.configRejected, "configuration file not reloaded: \(error)",
                                      extra: ["key": JSONValue(error.key), "file": .string(config.filePath)])
            }
        case .configGet:
            return .result(try params.optionalBool("origin") == true ? await config.effectiveWithOrigins() : await config.effective())
        case .configSet:
            guard !params.members.isEmpty else { throw RPCError.invalidParams("give at least one configuration key") }
            return .result(try await config.set(params.members, by: client))
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
            await bus.subscribe(connection: client.id, queue: client.queue, prefixes: prefixes, role: client.role,
                                since: since, sinceBootId: sinceBoot) {
                RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .success($0)).line()
            }
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
        case .playbackStart:
            let filmId = try params.string("filmId")
            guard let episodeNo = try params.optionalInt("episodeNo", range: 1...Int(Int32.max)) else {
                throw RPCError.invalidParams("'episodeNo' is required")
            }
            guard let device = params.members["device"], device.objectValue != nil else {
                throw RPCError.invalidParams("'device' must be {unionInfo, drmKek}")
            }
            return .result(try await playback.start(filmId: filmId, episodeNo: episodeNo, unionInfo: device["unionInfo"]?.stringValue,
                                                    drmKek: device["drmKek"]?.stringValue))
        case .playbackError:
            // `message` (the SDK's text) is never branched on.
            return .result(try await playback.playerError(position: try position(params)))
        case .playbackForeground:
            return .result(try await playback.foreground(position: try position(params)))
        case .playbackStop:
            return .result(try await playback.stop())
        }
    }

    /// A player's `position` in seconds (≥ 0).
    private func position(_ params: Params) throws(RPCError) -> Double {
        let seconds = try params.number("position")
        guard seconds >= 0 else { throw RPCError.invalidParams("'position' must not be negative") }
        return seconds
    }

    /// The connection that may become an overlay's owner: the caller, unless it said `claim: false`
    /// (a one-shot tool reporting on a player's behalf).
    private func claimant(_ params: Params, _ client: ClientContext) throws(RPCError) -> Int? {
        try params.optionalBool("claim") == false ? nil : client.id
    }
}
