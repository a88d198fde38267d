import IPCProtocol
import JSONValue

/// An asynchronous client of interactived's local API (docs/ipc.md, docs/players.md).
///
/// ```swift
/// let client = try await InteractiveClient.connect(path: "/run/interactived/interactived.sock")
/// let hello = try await client.hello(client: "my-player")
/// for try await event in client.events(types: ["overlay.", "answer."]) { … }
/// ```
///
/// Calls and the event stream share one connection. When it drops, calls in flight throw
/// `IPCClientError.connectionClosed`; the next call connects again, and the event stream
/// reconnects by itself (`ReconnectPolicy`). The socket is read by a Dispatch source on the
/// client's own serial queue, which is also the actor's executor: nothing blocks Swift's
/// cooperative pool.
public actor InteractiveClient {
    /// Settings of a client.
    public struct Options: Sendable {
        /// How long a call waits for its reply.
        public var callTimeout: Duration
        /// How the event stream reconnects.
        public var reconnect: ReconnectPolicy
        /// Events held for a consumer that does not keep up; beyond it `lagged` marks the loss.
        public var eventBufferCapacity: Int

        public init(callTimeout: Duration = .seconds(30), reconnect: ReconnectPolicy = ReconnectPolicy(),
                    eventBufferCapacity: Int = 4096) {
            self.callTimeout = callTimeout
            self.reconnect = reconnect
            self.eventBufferCapacity = eventBufferCapacity
        }
    }

    /// The daemon's socket.
    public nonisolated let path: String
    public nonisolated let options: Options
    nonisolated let executor = QueueExecutor(label: "interactive-client")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var connection: SocketConnection?
    /// Counts connections, so a late notification of an old one is ignored.
    private var generation = 0
    private var pending: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
    private var nextRequestID = 1
    private(set) var isClosed = false
    /// The event stream's state on this client (InteractiveClient+Subscription.swift).
    var subscription: ActiveSubscription?
    /// The token of the newest event stream: only that one is served.
    var latestSubscriptionToken = 0

    private init(path: String, options: Options) {
        self.path = path
        self.options = options
    }

    /// Connects to the daemon's socket at `path` (see `SocketPath.forClient` for the usual one).
    /// Throws `IPCClientError.unreachable` when nothing listens there.
    public static func connect(path: String, options: Options = Options()) async throws -> InteractiveClient {
        let client = InteractiveClient(path: path, options: options)
        try await client.connectNow()
        return client
    }

    /// Calls `method` and returns its result. A daemon error is thrown as `IPCClientError.rpc`
    /// (its `code`, and `name` for the daemon's own errors); a cancelled task gets
    /// `CancellationError`.
    public func call(_ method: String, _ params: JSONValue? = nil, timeout: Duration? = nil) async throws -> JSONValue {
        let connection = try openConnection()
        let id = nextRequestID
        nextRequestID += 1
        let line = RPCRequest(id: .number(Double(id)), method: method, params: params).line()
        let executor = self.executor
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending[id] = continuation
                guard connection.send(line) else { return connectionLost() }
                executor.after(timeout ?? options.callTimeout) { [weak self] in
                    self?.assumeIsolated { $0.fail(id, IPCClientError.timeout) }
                }
            }
        } onCancel: {
            executor.queue.async { [weak self] in self?.assumeIsolated { $0.fail(id, CancellationError()) } }
        }
    }

    /// Calls a method of the protocol.
    public func call(_ method: IPCMethod, _ params: JSONValue? = nil, timeout: Duration? = nil) async throws -> JSONValue {
        try await call(method.rawValue, params, timeout: timeout)
    }

    /// Sends a notification (no reply; `player.time` is usually sent this way).
    public func notify(_ method: String, _ params: JSONValue? = nil) throws {
        let connection = try openConnection()
        guard connection.send(RPCRequest(id: nil, method: method, params: params).line()) else {
            connectionLost()
            throw IPCClientError.connectionClosed
        }
    }

    /// Closes the connection for good: calls in flight and later ones throw
    /// `IPCClientError.connectionClosed`, and the event stream ends.
    public func close() {
        isClosed = true
        connectionLost()
        endSubscription()
    }

    /// Closes the socket as a broken connection would (what a daemon restart looks like from
    /// here), without closing the client. For tests of reconnection.
    func dropConnection() {
        connectionLost()
    }

    // MARK: The connection

    private func connectNow() throws {
        try openConnection()
    }

    /// The current connection, or a new one.
    @discardableResult
    func openConnection() throws -> SocketConnection {
        guard !isClosed else { throw IPCClientError.connectionClosed }
        if let connection { return connection }
        generation += 1
        let generation = self.generation
        let made = try SocketConnection(
            path: path, queue: executor.queue,
            onReadable: { [weak self] in self?.assumeIsolated { $0.readable(generation) } },
            onWritable: { [weak self] in self?.assumeIsolated { $0.writable(generation) } })
        connection = made
        return made
    }

    private func readable(_ generation: Int) {
        guard generation == self.generation, let connection else { return }
        let result = connection.readAvailable()
        for line in result.lines { handle(line) }
        if result.closed { connectionLost() }
    }

    private func writable(_ generation: Int) {
        guard generation == self.generation, let connection else { return }
        if !connection.flush() { connectionLost() }
    }

    private func handle(_ line: [UInt8]) {
        // The daemon only sends valid JSON-RPC; anything else is skipped rather than trusted.
        guard case .success(let message) = RPCIncoming.decode(line: line) else { return }
        switch message {
        case .response(let response):
            guard let id = response.id.intValue, let continuation = pending.removeValue(forKey: id) else { return }
            switch response.outcome {
            case .success(let result): continuation.resume(returning: result)
            case .failure(let error): continuation.resume(throwing: IPCClientError.rpc(error))
            }
        case .notification(let method, let params) where method == eventNotificationMethod:
            if let envelope = EventEnvelope(params: params) { deliver(envelope) }
        case .notification, .request:
            break
        }
    }

    private func fail(_ id: Int, _ error: any Error) {
        pending.removeValue(forKey: id)?.resume(throwing: error)
    }

    /// The connection ended (or is abandoned): every call in flight fails, the event stream
    /// learns it, and the next call connects again.
    private func connectionLost() {
        connection?.close()
        connection = nil
        let failed = pending
        pending = [:]
        for continuation in failed.values { continuation.resume(throwing: IPCClientError.connectionClosed) }
        subscriptionConnectionLost()
    }
}
