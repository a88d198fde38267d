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
            outcome = .failure(.invalidParams(error.description))
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
        guard let method = IPCMethod(rawValue: request.method), implemented.contains(method) else {
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
                "capabilities": .array(implemented.map { .string($0.rawValue) }.sorted { $0.stringValue ?? "" < $1.stringValue ?? "" }),
            ])
        case .daemonStatus:
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
        default:
            throw RPCError.methodNotFound(request.method)
        }
    }

    /// The methods this build serves.
    private var implemented: Set<IPCMethod> {
        [.daemonHello, .daemonStatus, .configGet, .configSet, .sessionLogin, .sessionLogout, .eventsSubscribe, .eventsUnsubscribe]
    }
}
