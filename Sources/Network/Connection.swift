import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection, optionally under TLS, driven by the event loop: non-blocking I/O, readiness
/// from epoll, no thread of its own.
///
/// Isolated to `LoopActor`: it lives on the loop, and so does everything that uses it. Events
/// reach the handler given to `start`, on the loop, in order: what was received (plaintext),
/// `drained` once queued output is all written, and `closed` exactly once at the end (nil for an
/// orderly end, either side's). The I/O itself is in Connection+IO.swift.
@LoopActor
public final class Connection {
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
    public nonisolated static let maxQueuedOutput = 64 << 20
    /// Chunks read per turn of the loop before other work gets its turn.
    static let chunksPerTurn = 16

    enum Phase {
        /// Connecting or in the TLS handshake; `setup` is waiting.
        case opening
        /// Started; events go to the handler.
        case open
        /// `close()` was called: writing what is queued, then dropping input until the peer closes.
        case closing(drained: Bool)
        case closed
    }

    let loop = EventLoop.shared
    let fd: Int32
    var phase = Phase.opening
    var tls: TLSSession?
    var handler: (@LoopActor (Event) -> Void)?
    var readingEnabled = true
    var output: [UInt8] = []
    var outputOffset = 0
    var setup: CheckedContinuation<Void, any Error>?
    var setupTimer: TimerID?
    /// Why the connection closed, for a `start` that comes after the end.
    var endReason: NetworkError?
    var lingerTimer: TimerID?
    /// Set when the handler must hear `drained` after the current output is written.
    var reportDrain = false
    /// A flush is queued for the end of this turn of the loop.
    var flushQueued = false
    var onWritable: (() -> Void)?
    var onReadable: (() -> Void)?

    /// A connection for `fd`, whose connect has started.
    private init(fd: Int32) {
        self.fd = fd
    }

    /// A connection dropped without `close` or `abort`: its descriptor is closed on the loop.
    isolated deinit {
        if case .closed = phase { return }
        loop.deregister(fd)
        _ = Glibc.close(fd)
    }

    // MARK: Connecting

    /// Resolves `host` (within `timeout`), connects to its addresses in turn (each gets a share of
    /// what is left of `timeout`) and, with `tls`, completes the TLS handshake with verification. Cancelling the
    /// calling task ends the attempt at once. Throws `NetworkError` (`.cancelled` when cancelled).
    public static func connect(
        host: String, port: Int, tls: TLSOptions?, timeout: Duration, log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> Connection {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let addresses: [SocketAddress]
        do {
            addresses = try await withTimeout(timeout, "resolving \(host)") {
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
                let connection = try open(address)
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

    /// A non-blocking socket, its connect started.
    private static func open(_ address: SocketAddress) throws -> Connection {
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
        return Connection(fd: fd)
    }

    /// Runs `step` with the set-up waiting for it, failing with a timeout at `deadline`.
    private func perform(until deadline: ContinuousClock.Instant, what: String, _ step: (Connection) -> Void) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                beginSetup(continuation, until: deadline, what: what, step)
            }
        } onCancel: {
            EventLoop.shared.execute { [weak self] in self?.fail(.cancelled) }
        }
    }

    // MARK: Running

    /// Starts delivering events to `handler`. Once.
    public func start(_ handler: @escaping @LoopActor (Event) -> Void) {
        guard case .opening = phase else {
            if case .closed = phase { handler(.closed(endReason)) }
            return
        }
        phase = .open
        self.handler = handler
        // Bytes may already wait in the kernel or in TLS's buffer: read now, not at the next edge.
        pump()
    }

    /// Queues `bytes` for sending, in call order. They are sent when the loop next runs its
    /// queued work (right after this turn's I/O handlers), with everything else the turn wrote
    /// here: the emit-acks of the overlays one read brought go out in one `send`, not one each.
    /// `close` sends what is queued first; `abort`, or the connection's end, drops it.
    public func write(_ bytes: [UInt8]) {
        guard case .open = phase else { return }
        if let tls {
            do {
                try tls.write(bytes)
            } catch {
                fail(error)
                return
            }
        } else {
            output.append(contentsOf: bytes)
        }
        guard !flushQueued else { return }
        flushQueued = true
        loop.execute { [weak self] in
            guard let self else { return }
            flushQueued = false
            // A close flushed already; a closed socket's descriptor may belong to another by now.
            guard case .open = phase else { return }
            flushTLSOutput()
        }
    }

    /// Asks for a `drained` event once everything queued is written (at once if nothing is).
    public func notifyWhenDrained() {
        guard case .open = phase else { return }
        if output.count == outputOffset && !flushQueued {
            handler?(.drained)
        } else {
            reportDrain = true
        }
    }

    /// Flow control: while off, nothing is read, so the peer's data waits in the kernel and TCP
    /// slows the peer down.
    public func setReading(_ on: Bool) {
        guard readingEnabled != on else { return }
        readingEnabled = on
        if on { pump() }
    }

    /// Writes what is queued (and a TLS close_notify), then waits for the peer to close its side
    /// before closing the socket, `linger` at most. Closing at once could reset the connection (a
    /// close with unread bytes sends RST), and RFC 6455 §7.1.1 asks a client to let the server
    /// close the TCP connection first. Nothing more is delivered but `closed`.
    public func close(linger: Duration = .seconds(2)) {
        switch phase {
        case .open:
            phase = .closing(drained: false)
            lingerTimer = loop.schedule(after: linger) { [weak self] in self?.finish(nil) }
            tls?.shutdown()
            flushTLSOutput()
        case .opening:
            fail(.cancelled)
        case .closing, .closed:
            return
        }
    }

    /// Closes the socket now; the handler hears `closed(error)`.
    public func abort(_ error: NetworkError = .cancelled) {
        fail(error)
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}
