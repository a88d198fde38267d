import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection, optionally under TLS, driven by the event loop: non-blocking I/O, readiness
/// from epoll, no thread of its own.
///
/// `connect` may be awaited from anywhere. Everything else runs on the loop (call it from an actor
/// pinned to `EventLoop.shared`); events reach the handler given to `start`, on the loop, in
/// order: what was received (plaintext), `drained` once queued output is all written, and
/// `closed` exactly once at the end (nil for an orderly end, either side's). Those loop-only
/// methods check that they run on the loop's thread (`LoopConfined`), in every build.
public final class Connection: Sendable {
    /// What the connection tells its owner.
    public enum Event: Sendable {
        /// Bytes from the peer (plaintext under TLS).
        case received([UInt8])
        /// Everything written so far has reached the kernel.
        case drained
        /// The connection is closed: nil after an orderly end (the peer's or `close`), else why.
        case closed(NetworkError?)
    }

    /// Output queued beyond this many bytes fails the connection (a peer that stopped reading).
    public static let maxQueuedOutput = 64 << 20

    /// The connection's state and logic, touched only on the loop (the box checks it).
    private let core: LoopConfined<ConnectionCore>

    /// On the loop: a connection for `fd`, whose connect has started.
    private init(fd: Int32, loop: EventLoop) {
        core = ConnectionCore.boxed(fd: fd, loop: loop)
    }

    // MARK: Connecting

    /// Resolves `host` (within `timeout`), connects to its addresses in turn (each gets a share of
    /// what is left of `timeout`) and, with `tls`, completes the TLS handshake with verification. Cancelling the
    /// calling task ends the attempt at once. Throws `NetworkError` (`.cancelled` when cancelled).
    public static func connect(
        host: String, port: Int, tls: TLSOptions?, timeout: Duration, loop: EventLoop = .shared,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> Connection {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let addresses: [SocketAddress]
        do {
            addresses = try await withTimeout(timeout, "resolving \(host)", loop: loop) {
                try await DNSResolver.resolve(host: host, port: port)
            }
        } catch let error as TimeoutError {
            throw NetworkError.timeout(error.what)
        } catch is CancellationError {
            throw NetworkError.cancelled
        }
        let hostIsIP = DNSResolver.numericAddress(host: host, port: port) != nil
        var lastError = NetworkError.connectFailed("no address for \(host)")
        for (index, address) in addresses.enumerated() {
            if Task.isCancelled { throw NetworkError.cancelled }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw NetworkError.timeout("connecting to \(host):\(port)") }
            let share = remaining / (addresses.count - index)
            do {
                let connection = try await open(address, loop: loop)
                try await connection.perform(until: ContinuousClock.now.advanced(by: share),
                                             what: "TCP connect to \(address.description)") { $0.finishConnecting(address) }
                if let tls {
                    try await connection.perform(until: deadline, what: "TLS handshake with \(host)") {
                        $0.startTLS(host: host, hostIsIP: hostIsIP, options: tls)
                    }
                }
                return connection
            } catch let error as NetworkError {
                switch error {
                case .tlsFailed, .tlsVerificationFailed, .cancelled: throw error
                default:
                    log("connect to \(address.description) port \(port) failed: \(error)")
                    lastError = error
                }
            }
        }
        throw lastError
    }

    /// A non-blocking socket, its connect started, and its connection made on the loop.
    private static func open(_ address: SocketAddress, loop: EventLoop) async throws -> Connection {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.family, flags, 0)
        guard fd >= 0 else { throw NetworkError.connectFailed("socket(): \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if result != 0 && errno != EINPROGRESS {
            let error = NetworkError.connectFailed("\(address.description): \(errnoText())")
            _ = Glibc.close(fd)
            throw error
        }
        return await withCheckedContinuation { made in
            loop.execute { made.resume(returning: Connection(fd: fd, loop: loop)) }
        }
    }

    /// Runs `step` on the loop with the set-up waiting for it, failing with a timeout at `deadline`.
    private func perform(until deadline: ContinuousClock.Instant, what: String,
                         _ step: @escaping @Sendable (ConnectionCore) -> Void) async throws {
        let core = self.core
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                core.loop.execute {
                    core.value.beginSetup(continuation, until: deadline, what: what, step)
                }
            }
        } onCancel: {
            core.loop.execute { [weak core] in core?.value.fail(.cancelled) }
        }
    }

    // MARK: Running

    /// Starts delivering events to `handler`. Loop only; once.
    public func start(_ handler: @escaping @Sendable (Event) -> Void) {
        core.value.start(handler)
    }

    /// Queues `bytes` for sending, in call order. Loop only.
    public func write(_ bytes: [UInt8]) {
        core.value.write(bytes)
    }

    /// Asks for a `drained` event once everything queued is written (at once if nothing is). Loop only.
    public func notifyWhenDrained() {
        core.value.notifyWhenDrained()
    }

    /// Flow control: while off, nothing is read, so the peer's data waits in the kernel and TCP
    /// slows the peer down. Loop only.
    public func setReading(_ on: Bool) {
        core.value.setReading(on)
    }

    /// Writes what is queued (and a TLS close_notify), then waits for the peer to close its side
    /// before closing the socket, `linger` at most. Closing at once could reset the connection (a
    /// close with unread bytes sends RST), and RFC 6455 §7.1.1 asks a client to let the server
    /// close the TCP connection first. Nothing more is delivered but `closed`. Loop only.
    public func close(linger: Duration = .seconds(2)) {
        core.value.close(linger: linger)
    }

    /// Closes the socket now; the handler hears `closed(error)`. Loop only.
    public func abort(_ error: NetworkError = .cancelled) {
        core.value.fail(error)
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}
