import Network
import Runtime

/// HTTP/1.1 requests on the event loop (isolated to `LoopActor`), over `Network.Connection`
/// (TCP, optionally TLS). No thread is held by a request: a request that waits is a parser and a
/// continuation in this client's tables.
///
/// Connections are kept alive in a small pool per origin and TLS setting. Each request has a
/// total deadline (connect included) on the loop's timers, and a cancelled task fails at once
/// with `HTTPError.cancelled`, its connection closed.
///
/// A request is sent again by the client only when that cannot do what the caller did not ask
/// for (RFC 9110 §9.2.2): an idempotent request (GET, HEAD, …) whose kept-alive connection
/// closed before any byte of a response is sent once more, on a new connection. Any other
/// request (a POST: an answer, a play request) is never sent twice by the client: once its bytes
/// may have reached the server, a lost connection is the caller's error, and only the caller's
/// own retry sends it again. Such a request reuses only a connection that idled less than
/// `unsafeReuseWindow`, well below the keep-alive timeouts of common servers (Apache and
/// Node.js close after 5 s), so that the server rarely closes it under the request.
@LoopActor
public final class HTTPClient {
    /// The daemon's client: one keep-alive pool for the process.
    public static let shared = HTTPClient()

    /// What a pooled connection was opened with: a connection is reused only for the same.
    private struct PoolKey: Hashable, Sendable {
        var origin: HTTPOrigin
        var caFile: String?
        var insecure: Bool
    }

    /// A parked connection, when it was parked, and the timer that closes it when it idles too long.
    private struct Idle: Sendable {
        let connection: Connection
        let parkedAt: ContinuousClock.Instant
        let timer: TimerID
    }

    /// How an exchange on one connection ended.
    private enum Outcome: Sendable {
        case response(HTTPResponse)
        case failed(HTTPError)
        /// A reused connection closed before any byte of a response: the peer most likely
        /// closed it while idle, but it may have taken the request.
        case stale
    }

    /// A request waiting for its response on one connection.
    private struct Exchange {
        /// Names this exchange among those its connection carries, so that a late timer or
        /// cancellation of an earlier one never ends it.
        let token: Int
        let connection: Connection
        let key: PoolKey
        let reused: Bool
        var parser: HTTPResponseParser
        let continuation: CheckedContinuation<Outcome, Never>
        let timer: TimerID
    }

    private let idleTimeout: Duration
    private let unsafeReuseWindow: Duration
    private var pool: ConnectionPool<PoolKey, Idle>
    private var exchanges: [Int: Exchange] = [:]
    /// Connections whose event handler is installed (they carried a request already).
    private var started: Set<Int> = []
    private var nextID = 0
    private var nextToken = 0

    /// `maxIdlePerOrigin` connections are kept per origin, each closed after `idleTimeout` unused.
    /// A request that is not idempotent reuses only a connection idle for less than
    /// `unsafeReuseWindow`.
    public init(maxIdlePerOrigin: Int = 4, idleTimeout: Duration = .seconds(30), unsafeReuseWindow: Duration = .seconds(2)) {
        pool = ConnectionPool(maxIdlePerKey: maxIdlePerOrigin)
        self.idleTimeout = idleTimeout
        self.unsafeReuseWindow = unsafeReuseWindow
    }

    /// Sends `request` and returns the complete response, whatever its status. An idempotent
    /// request on a kept-alive connection that closes before any byte of a response is sent once
    /// more on a new connection; any other request then fails with `connectionClosed` and is not
    /// sent again (see the type's documentation).
    ///
    /// - Parameters:
    ///   - tls: the trust settings for an `https` URL (ignored for `http`).
    ///   - timeout: the whole request, connect included.
    ///   - connectTimeout: the connect alone (at most `timeout`).
    ///   - maxBodyBytes: a larger response body fails the request.
    public func send(_ request: HTTPRequest, tls: TLSOptions = TLSOptions(), timeout: Duration,
                     connectTimeout: Duration? = nil, maxBodyBytes: Int = 16 << 20) async throws(HTTPError) -> HTTPResponse {
        let bytes = try request.encoded()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let url = request.url
        let key = PoolKey(origin: url.origin, caFile: url.secure ? tls.caFile : nil, insecure: url.secure && tls.insecure)
        let idempotent = request.isIdempotent
        var mayReuse = true
        while true {
            guard !Task.isCancelled else { throw .cancelled }
            let id: Int
            let connection: Connection
            let reused: Bool
            if mayReuse, let entry = takeIdle(key, idempotent: idempotent) {
                EventLoop.shared.cancel(entry.handle.timer)
                (id, connection, reused) = (entry.id, entry.handle.connection, true)
            } else {
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero else { throw .timedOut("\(request.method) \(url.hostHeader)") }
                connection = try await Self.connect(url, tls: url.secure ? tls : nil, timeout: min(connectTimeout ?? remaining, remaining))
                nextID += 1
                (id, reused) = (nextID, false)
            }
            let parser = HTTPResponseParser(requestMethod: request.method, maxBodyBytes: maxBodyBytes)
            nextToken += 1
            let token = nextToken
            let outcome = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                    begin(id, token: token, connection, key: key, reused: reused, parser: parser, bytes: bytes, deadline: deadline,
                          what: "\(request.method) \(url.hostHeader)", continuation: continuation)
                }
            } onCancel: {
                EventLoop.shared.execute { [weak self] in self?.fail(id, token: token, .cancelled) }
            }
            switch outcome {
            case .response(let response): return response
            case .failed(let error): throw error
            case .stale where idempotent && mayReuse:
                mayReuse = false  // once more, on a new connection
            case .stale:
                throw .connectionClosed("the kept-alive connection to \(url.hostHeader) closed before any reply; \(request.method) is not sent twice")
            }
        }
    }

    /// A parked connection for `key` a request may use: for one that is not idempotent, only
    /// one parked within `unsafeReuseWindow` (the most recently parked is the freshest).
    private func takeIdle(_ key: PoolKey, idempotent: Bool) -> ConnectionPool<PoolKey, Idle>.Entry? {
        let freshSince = ContinuousClock.now.advanced(by: .zero - unsafeReuseWindow)
        return pool.take(key) { idempotent || $0.parkedAt > freshSince }
    }

    /// The idle connections kept now (for tests and status).
    public var idleConnections: Int { pool.count }

    /// Closes every idle connection.
    public func closeIdleConnections() {
        for idle in pool.removeAll() {
            EventLoop.shared.cancel(idle.timer)
            idle.connection.abort()
        }
    }

    private static func connect(_ url: HTTPURL, tls: TLSOptions?, timeout: Duration) async throws(HTTPError) -> Connection {
        do {
            return try await Connection.connect(host: url.host, port: url.port, tls: tls, timeout: timeout)
        } catch let error as NetworkError {
            switch error {
            case .cancelled: throw .cancelled
            case .timeout: throw .timedOut("connecting to \(url.hostHeader)")
            default: throw .connectFailed(error.description)
            }
        } catch {
            throw .cancelled  // CancellationError: the only other error connect throws
        }
    }

    // MARK: One exchange

    private func begin(_ id: Int, token: Int, _ connection: Connection, key: PoolKey, reused: Bool, parser: HTTPResponseParser, bytes: [UInt8],
                       deadline: ContinuousClock.Instant, what: String, continuation: CheckedContinuation<Outcome, Never>) {
        let timer = EventLoop.shared.schedule(at: deadline) { [weak self] in
            self?.fail(id, token: token, .timedOut(what))
        }
        exchanges[id] = Exchange(token: token, connection: connection, key: key, reused: reused, parser: parser, continuation: continuation, timer: timer)
        if Task.isCancelled { return fail(id, token: token, .cancelled) }
        if started.insert(id).inserted {
            connection.start { [weak self] event in
                self?.handle(id, event)
            }
        }
        connection.write(bytes)
    }

    private func handle(_ id: Int, _ event: Connection.Event) {
        guard let reused = exchanges[id]?.reused else {
            // An idle connection: whatever it says (bytes nobody asked for, a close), it is done.
            if case .drained = event { return }
            if let idle = pool.remove(id: id) {
                EventLoop.shared.cancel(idle.timer)
                idle.connection.abort()
            }
            started.remove(id)
            return
        }
        // The parser is mutated in place in the table (a copy would copy the body at every chunk).
        switch event {
        case .received(let bytes):
            do {
                guard let response = try exchanges[id]?.parser.receive(bytes) else { return }
                finish(id, .response(response), keep: exchanges[id]?.parser.connectionReusable ?? false)
            } catch {
                finish(id, .failed(error), keep: false)
            }
        case .drained:
            return
        case .closed(let cause):
            do {
                guard let response = try exchanges[id]?.parser.receiveEnd() else { return }
                finish(id, .response(response), keep: false)
            } catch {
                let receivedAny = exchanges[id]?.parser.receivedAny ?? false
                if reused && !receivedAny {
                    finish(id, .stale, keep: false)
                } else if let cause, !receivedAny {
                    finish(id, .failed(.connectionClosed(cause.description)), keep: false)
                } else {
                    finish(id, .failed(error), keep: false)
                }
            }
        }
    }

    /// Ends the exchange `token` on connection `id` with `error` now (timeout, cancellation),
    /// closing its connection; nothing when that exchange is over.
    private func fail(_ id: Int, token: Int, _ error: HTTPError) {
        guard exchanges[id]?.token == token else { return }
        finish(id, .failed(error), keep: false)
    }

    private func finish(_ id: Int, _ outcome: Outcome, keep: Bool) {
        guard let exchange = exchanges.removeValue(forKey: id) else { return }
        EventLoop.shared.cancel(exchange.timer)
        if keep {
            park(id, exchange)
        } else {
            started.remove(id)
            exchange.connection.abort()
        }
        exchange.continuation.resume(returning: outcome)
    }

    private func park(_ id: Int, _ exchange: Exchange) {
        let timer = EventLoop.shared.schedule(after: idleTimeout) { [weak self] in
            self?.expireIdle(id)
        }
        guard pool.park(exchange.key, id: id, Idle(connection: exchange.connection, parkedAt: .now, timer: timer)) else {
            EventLoop.shared.cancel(timer)
            started.remove(id)
            exchange.connection.abort()
            return
        }
    }

    private func expireIdle(_ id: Int) {
        guard let idle = pool.remove(id: id) else { return }
        started.remove(id)
        idle.connection.abort()
    }
}
