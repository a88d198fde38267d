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
/// `closed` exactly once at the end (nil for an orderly end, either side's).
///
/// `@unchecked Sendable`: every mutable field is touched only on the loop's thread (each entry
/// point asserts it); the descriptor itself is immutable.
public final class Connection: @unchecked Sendable {
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
    /// Chunks read per turn of the loop before other work gets its turn.
    private static let chunksPerTurn = 16

    private enum Phase {
        /// Connecting or in the TLS handshake; `setup` is waiting.
        case opening
        /// Started; events go to the handler.
        case open
        /// `close()` was called: writing what is queued, then dropping input until the peer closes.
        case closing(drained: Bool)
        case closed
    }

    private let loop: EventLoop
    private let fd: Int32
    private var phase = Phase.opening
    private var tls: TLSSession?
    private var handler: (@Sendable (Event) -> Void)?
    private var readingEnabled = true
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var setup: CheckedContinuation<Void, any Error>?
    private var setupTimer: TimerID?
    /// Why the connection closed, for a `start` that comes after the end.
    private var endReason: NetworkError?
    private var lingerTimer: TimerID?
    /// Set when the handler must hear `drained` after the current output is written.
    private var reportDrain = false

    private init(fd: Int32, loop: EventLoop) {
        self.fd = fd
        self.loop = loop
    }

    deinit {
        if case .closed = phase { return }
        let (loop, fd) = (self.loop, self.fd)
        loop.execute {
            loop.deregister(fd)
            _ = Glibc.close(fd)
        }
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

    /// A non-blocking socket registered with the loop, its connect started.
    private static func open(_ address: SocketAddress, loop: EventLoop) async throws -> Connection {
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(address.family, flags, 0)
        guard fd >= 0 else { throw NetworkError.connectFailed("socket(): \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
        let connection = Connection(fd: fd, loop: loop)
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if result != 0 && errno != EINPROGRESS {
            let error = NetworkError.connectFailed("\(address.description): \(errnoText())")
            _ = Glibc.close(fd)
            connection.phase = .closed
            throw error
        }
        return connection
    }

    /// Runs `step` on the loop with `setup` waiting for it, failing with a timeout at `deadline`.
    private func perform(until deadline: ContinuousClock.Instant, what: String,
                         _ step: @escaping @Sendable (Connection) -> Void) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                loop.execute { [self] in
                    guard case .opening = phase else {
                        continuation.resume(throwing: NetworkError.cancelled)
                        return
                    }
                    setup = continuation
                    setupTimer = loop.schedule(at: deadline) { [weak self] in self?.fail(.timeout(what)) }
                    step(self)
                }
            }
        } onCancel: {
            loop.execute { [weak self] in self?.fail(.cancelled) }
        }
    }

    private func finishSetup() {
        if let setupTimer { loop.cancel(setupTimer) }
        setupTimer = nil
        let continuation = setup
        setup = nil
        continuation?.resume()
    }

    /// Registers the socket and waits until the connect completes.
    private func finishConnecting(_ address: SocketAddress) {
        do {
            try loop.register(fd) { [weak self] events in self?.handle(events) }
        } catch {
            fail(.connectFailed("epoll: \(error)"))
            return
        }
        onWritable = { [weak self] in
            guard let self else { return }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error == 0 {
                finishSetup()
            } else {
                fail(.connectFailed("\(address.description): \(String(cString: strerror(error)))"))
            }
        }
    }

    private var onWritable: (() -> Void)?
    private var onReadable: (() -> Void)?

    private func startTLS(host: String, hostIsIP: Bool, options: TLSOptions) {
        do {
            tls = try TLSSession(host: host, hostIsIP: hostIsIP, options: options)
        } catch {
            fail(error)
            return
        }
        continueHandshake()
    }

    private func continueHandshake() {
        guard let tls else { return }
        do {
            while true {
                let step = try tls.handshake()
                flushTLSOutput()
                if case .closed = phase { return }  // the flush failed the connection
                switch step {
                case .done:
                    finishSetup()
                    return
                case .closed:
                    throw NetworkError.tlsFailed("the server closed the connection during the handshake")
                case .wantRead:
                    switch try receiveRaw() {
                    case .data(let bytes): bytes.withUnsafeBytes { tls.feed($0) }
                    case .wouldBlock:
                        onReadable = { [weak self] in self?.continueHandshake() }
                        return
                    case .endOfStream:
                        throw NetworkError.tlsFailed("the server closed the connection during the handshake")
                    }
                }
            }
        } catch let error as NetworkError {
            fail(error)
        } catch {
            fail(.tlsFailed("\(error)"))
        }
    }

    // MARK: Running

    /// Starts delivering events to `handler`. Loop only; once.
    public func start(_ handler: @escaping @Sendable (Event) -> Void) {
        loop.assertInLoop()
        guard case .opening = phase else {
            if case .closed = phase { handler(.closed(endReason)) }
            return
        }
        phase = .open
        self.handler = handler
        // Bytes may already wait in the kernel or in TLS's buffer: read now, not at the next edge.
        pump()
    }

    /// Queues `bytes` for sending, in call order. Loop only.
    public func write(_ bytes: [UInt8]) {
        loop.assertInLoop()
        guard case .open = phase else { return }
        if let tls {
            do {
                try tls.write(bytes)
            } catch {
                fail(error)
                return
            }
            flushTLSOutput()
        } else {
            output.append(contentsOf: bytes)
            flushOutput()
        }
    }

    /// Asks for a `drained` event once everything queued is written (at once if nothing is). Loop only.
    public func notifyWhenDrained() {
        loop.assertInLoop()
        guard case .open = phase else { return }
        if output.count == outputOffset {
            handler?(.drained)
        } else {
            reportDrain = true
        }
    }

    /// Flow control: while off, nothing is read, so the peer's data waits in the kernel and TCP
    /// slows the peer down. Loop only.
    public func setReading(_ on: Bool) {
        loop.assertInLoop()
        guard readingEnabled != on else { return }
        readingEnabled = on
        if on { pump() }
    }

    /// Writes what is queued (and a TLS close_notify), then waits for the peer to close its side
    /// before closing the socket, `linger` at most. Closing at once could reset the connection (a
    /// close with unread bytes sends RST), and RFC 6455 §7.1.1 asks a client to let the server
    /// close the TCP connection first. Nothing more is delivered but `closed`. Loop only.
    public func close(linger: Duration = .seconds(2)) {
        loop.assertInLoop()
        switch phase {
        case .open:
            phase = .closing(drained: false)
            lingerTimer = loop.schedule(after: linger) { [weak self] in self?.finish(nil) }
            if let tls {
                tls.shutdown()
                flushTLSOutput()
            } else {
                flushOutput()
            }
        case .opening:
            fail(.cancelled)
        case .closing, .closed:
            return
        }
    }

    /// Closes the socket now; the handler hears `closed(error)`. Loop only.
    public func abort(_ error: NetworkError = .cancelled) {
        loop.assertInLoop()
        fail(error)
    }

    // MARK: Reading

    private func pump() {
        guard handler != nil, readingEnabled else { return }
        do {
            for _ in 0..<Connection.chunksPerTurn {
                guard case .open = phase, readingEnabled else { return }
                switch try readChunk() {
                case .data(let bytes):
                    handler?(.received(bytes))
                case .endOfStream:
                    finish(nil)
                    return
                case .wouldBlock:
                    onReadable = { [weak self] in self?.pump() }
                    return
                }
            }
            loop.execute { [weak self] in self?.pump() }
        } catch {
            fail(error)
        }
    }

    private enum RawRead {
        case data([UInt8])
        case wouldBlock
        case endOfStream
    }

    /// One chunk of plaintext, decrypting under TLS.
    private func readChunk() throws(NetworkError) -> RawRead {
        guard let tls else { return try receiveRaw() }
        while true {
            let plaintext = try loop.withReadBuffer { buffer in
                Result { () throws(NetworkError) -> RawRead? in
                    switch try tls.read(into: buffer) {
                    case .done(let count): return .data(Array(buffer.prefix(count)))
                    case .closed: return .endOfStream
                    case .wantRead: return nil
                    }
                }
            }.get()
            flushTLSOutput()
            if case .closed = phase { return .endOfStream }  // the flush failed the connection
            if let plaintext { return plaintext }
            switch try receiveRaw() {
            case .data(let bytes): bytes.withUnsafeBytes { tls.feed($0) }
            case .wouldBlock: return .wouldBlock
            case .endOfStream: return .endOfStream
            }
        }
    }

    private func receiveRaw() throws(NetworkError) -> RawRead {
        while true {
            let (count, bytes) = loop.withReadBuffer { buffer in
                let count = recv(fd, buffer.baseAddress, buffer.count, 0)
                return (count, count > 0 ? Array(buffer.prefix(count)) : [])
            }
            if count > 0 { return .data(bytes) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw .connectionLost("read: \(errnoText())")
            }
        }
    }

    /// After `close()` wrote everything: drops what the peer still sends until it closes.
    private func discardUntilPeerCloses() {
        do {
            while true {
                switch try readChunk() {
                case .data: continue
                case .endOfStream:
                    finish(nil)
                    return
                case .wouldBlock:
                    onReadable = { [weak self] in self?.discardUntilPeerCloses() }
                    return
                }
            }
        } catch {
            finish(nil)
        }
    }

    // MARK: Writing

    private func flushTLSOutput() {
        guard let tls else { return }
        tls.takeOutput(into: &output)
        flushOutput()
    }

    private func flushOutput() {
        if output.count - outputOffset > Connection.maxQueuedOutput {
            fail(.connectionLost("more than \(Connection.maxQueuedOutput) bytes waiting to be sent"))
            return
        }
        while outputOffset < output.count {
            let count = output.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + outputOffset }, raw.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                outputOffset += count
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                onWritable = { [weak self] in self?.flushOutput() }
                return
            }
            fail(.connectionLost("write: \(errnoText())"))
            return
        }
        output.removeAll(keepingCapacity: output.count <= 1 << 20)
        outputOffset = 0
        if reportDrain, case .open = phase {
            reportDrain = false
            handler?(.drained)
        }
        if case .closing(drained: false) = phase {
            phase = .closing(drained: true)
            discardUntilPeerCloses()
        }
    }

    // MARK: Readiness and the end

    private func handle(_ events: IOEvents) {
        if !events.isDisjoint(with: [.readable, .hangup, .error]) {
            let next = onReadable
            onReadable = nil
            next?()
        }
        if !events.isDisjoint(with: [.writable, .error]) {
            let next = onWritable
            onWritable = nil
            next?()
        }
    }

    private func fail(_ error: NetworkError) {
        finish(error)
    }

    /// Closes the descriptor (once), ends a pending set-up and tells the handler.
    private func finish(_ error: NetworkError?) {
        if case .closed = phase { return }
        phase = .closed
        endReason = error
        if let lingerTimer { loop.cancel(lingerTimer) }
        if let setupTimer { loop.cancel(setupTimer) }
        onReadable = nil
        onWritable = nil
        output = []
        outputOffset = 0
        tls = nil
        loop.deregister(fd)
        _ = Glibc.close(fd)
        let continuation = setup
        setup = nil
        continuation?.resume(throwing: error ?? .connectionLost("closed"))
        let handler = self.handler
        self.handler = nil
        handler?(.closed(error))
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}
