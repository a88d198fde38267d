import Runtime
import IPCProtocol
import JSONValue

/// The connection a request came from.
struct ClientContext: Sendable {
    let id: Int
    let peer: PeerCredentials?
    let role: ClientRole
    let queue: OutboundQueue
    /// Its denied calls are logged at most once per 10 s (a client may repeat them at will).
    let deniedCalls = DeniedCallLog()

    /// Who the client is, for log messages: "uid 1000 pid 4242".
    var logDescription: String {
        guard let peer else { return "client \(id) (credentials unknown)" }
        return "uid \(peer.uid) pid \(peer.pid)"
    }

    /// The client's journal fields.
    var logFields: LogFields {
        guard let peer else { return ["INTERACTIVE_CLIENT_ID": String(id)] }
        return ["INTERACTIVE_CLIENT_ID": String(id), "INTERACTIVE_CLIENT_PID": String(peer.pid),
                "INTERACTIVE_CLIENT_UID": String(peer.uid)]
    }
}

/// Checks the caller's role and dispatches each method to the part that owns its state.
@LoopActor
struct RequestRouter {
    let bus: EventBus
    let config: ConfigStore
    /// Re-reads the configuration file for `daemon.reload`.
    let reloader: ConfigReloader
    let rooms: RoomController
    let overlays: OverlayManager
    let playback: PlaybackManager
    let voice: VoiceManager
    let version: String
    let log: Logger

    /// What a handler produced.
    enum Outcome: Sendable {
        /// The typed result (a manager's result is JSON built from the typed value).
        case result(any MethodResult)
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
        case .success(.result(let result)): return RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .success(result.json)).line()
        case .success(.queued): return nil
        case .failure(let error): return RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .failure(error)).line()
        }
    }

    private func dispatch(_ request: RPCRequest, from client: ClientContext) async throws -> Outcome {
        guard let method = IPCMethod(rawValue: request.method) else {
            throw RPCError.methodNotFound(request.method)
        }
        if client.role == .observer && !method.isObserverAllowed {
            if let unlogged = client.deniedCalls.record(at: .now) {
                let more = unlogged > 0 ? " (\(unlogged) more denied calls of this client were not logged)" : ""
                log.warning("Permission denied: \(client.logDescription) called \(method.rawValue), which needs the control role\(more)",
                            client.logFields.merging(["INTERACTIVE_METHOD": method.rawValue]), id: .permissionDenied)
            }
            throw RPCError.daemon(.permissionDenied, "\(method.rawValue) needs the control role (root, the daemon's user or the privileged group)")
        }
        let params = try ParamReader(request.params)
        switch method {
        case .daemonHello:
            _ = try HelloParams(params)
            return .result(HelloResult(daemon: "interactived", version: version, protocolVersion: ipcProtocolVersion, bootId: bus.bootId,
                                       role: client.role.rawValue, capabilities: IPCMethod.allCases.map(\.rawValue).sorted()))
        case .daemonStatus:
            return .result(bus.snapshot(for: client.role))
        case .daemonReload:
            switch await reloader.reload() {
            case .success(let reload):
                return .result(ReloadResult(file: config.filePath, changed: reload.changed, restartNeeded: reload.restartNeeded))
            case .failure(let error):
                throw RPCError.daemon(.configRejected, "configuration file not reloaded: \(error)",
                                      extra: ["key": JSONValue(error.key), "file": .string(config.filePath)])
            }
        case .configGet:
            return .result(try ConfigGetParams(params).origin ? config.effectiveWithOrigins() : config.effective())
        case .configSet:
            return .result(try await config.set(try ConfigSetParams(params).changes, by: client))
        case .sessionLogin:
            let login = try SessionLoginParams(params)
            return .result(await rooms.login(token: login.token, userId: login.userId, displayName: login.displayName))
        case .sessionLogout:
            return .result(await rooms.logout())
        case .eventsSubscribe:
            let subscription = try EventsSubscribeParams(params)
            guard let id = request.id else {
                throw RPCError.invalidRequest("events.subscribe must be a request with an id")
            }
            bus.subscribe(connection: client.id, queue: client.queue, prefixes: subscription.types, role: client.role,
                                since: subscription.since, sinceBootId: subscription.bootId) {
                RPCResponse(id: id, idLiteral: request.idLiteral, outcome: .success($0.json)).line()
            }
            return .queued
        case .eventsUnsubscribe:
            bus.unsubscribe(connection: client.id)
            return .result(UnsubscribeResult())
        case .roomJoin:
            let join = try RoomJoinParams(params)
            return .result(try await rooms.join(mediaId: join.mediaId, mode: join.mode, fanclub: join.fanclub,
                                                timeoutMs: join.effectiveTimeoutMs))
        case .roomLeave:
            return .result(try await rooms.leave())
        case .playerTime:
            let time = try PlayerTimeParams(params)
            rooms.playerTime(time.seconds)
            return .result(PlayerTimeResult(seconds: time.seconds))
        case .playerState:
            let state = try PlayerStateParams(params)
            rooms.playerState(state: state.state.rawValue, position: state.position)
            return .result(PlayerStateResult(state: state.state.rawValue))
        case .playerViewport:
            let viewport = try Viewport(params)
            rooms.playerViewport(width: viewport.width, height: viewport.height)
            return .result(viewport)
        case .overlayAttached:
            let attached = try OverlayAttachedParams(params)
            try overlays.attached(attached.overlayId, connection: attached.claim ? client.id : nil)
            return .result(OKResult())
        case .overlayRendered:
            let rendered = try OverlayRenderedParams(params)
            let first = try overlays.rendered(rendered.overlayId, loaded: rendered.status == .loaded, reason: rendered.reason,
                                                    connection: rendered.claim ? client.id : nil)
            return .result(RenderedResult(recorded: first))
        case .overlayBridge:
            let bridge = try OverlayBridgeParams(params)
            return .result(try overlays.bridge(bridge.overlayId, message: bridge.posted, connection: bridge.claim ? client.id : nil))
        case .overlayDismiss:
            try overlays.dismiss(try OverlayDismissParams(params).overlayId)
            return .result(OKResult())
        case .answerConfirm:
            let confirm = try AnswerConfirmParams(params)
            try overlays.confirm(confirm.overlayId, accept: confirm.accept)
            return .result(OKResult())
        case .interactiveStatus:
            return .result(try await rooms.interactiveStatus(mediaId: try InteractiveStatusParams(params).mediaId))
        case .leaderboardURL:
            return .result(try rooms.leaderboardURL(mediaId: try LeaderboardURLParams(params).mediaId))
        case .predictOpen:
            return .result(try await rooms.predictOpen(timelineId: try PredictOpenParams(params).timelineId))
        case .playbackStart:
            let start = try PlaybackStartParams(params)
            return .result(try playback.start(filmId: start.filmId, episodeNo: start.episodeNo, unionInfo: start.device.unionInfo,
                                                    drmKek: start.device.drmKek))
        case .playbackError:
            // `message` (the SDK's text) is never branched on.
            return .result(try playback.playerError(position: try PlaybackErrorParams(params).position))
        case .playbackForeground:
            return .result(try playback.foreground(position: try PlaybackForegroundParams(params).position))
        case .playbackStop:
            return .result(try playback.stop())
        case .voiceJoin:
            return .result(try await voice.join(try VoiceJoinParams(params)))
        case .voiceLeave:
            return .result(try await voice.leave())
        case .voiceMute:
            return .result(try await voice.mute(try VoiceMuteParams(params).muted))
        }
    }
}
