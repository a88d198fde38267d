import CSocketIOShims
import Glibc
import Network

/// A connected TCP socket, optionally wrapped in TLS, driven by non-blocking I/O.
///
/// All state is touched only on the `Reactor` thread, which also reports readiness (epoll), so no
/// thread of Swift's cooperative pool ever blocks. One reader at a time calls `read()`; `send` may
/// be called from anywhere and keeps the order of calls. A failure (peer reset, cancellation of
/// a pending read, `abort`) closes the socket and fails every later call with the same error.
final class Transport: @unchecked Sendable {
    /// Upper bound of bytes queued for sending before the connection is declared broken.
    static let maxQueuedOutput = 64 << 20

    private let reactor = Reactor.shared
    private let fd: Int32
    /// Readiness seen since the last EAGAIN (the socket is watched edge-triggered).
    private var readable = false
    private var writable = false
    private var onReadable: (() -> Void)?
    private var onWritable: (() -> Void)?
    private var pendingRead: CheckedContinuation<[UInt8], any Error>?
    private var pushHandler: (@Sendable (Result<[UInt8], any Error>) -> Void)?
    /// Push mode: reading stops while the consumer is behind (see `setReceivingPaused`).
    private var receivingPaused = false
    private var output: [UInt8] = []
    private var outputOffset = 0
    private var failure: (any Error)?
    private var closeWhenDrained = false
    /// Set once the output is drained after `close()`: what the peer still sends is discarded.
    private var lingering = false
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private var tls: TLSSession?
    private var scratch = [UInt8](repeating: 0, count: 65_536)
    private var operationCount = 0

    private init(fd: Int32) {
        self.fd = fd
        reactor.execute { [weak self] in
            guard let self else { return }
            let registered = self.reactor.register(fd) { [weak self] events in self?.handle(events) }
            if !registered { self.fail(SocketIOError.connectFailed("epoll: \(errnoText())")) }
        }
    }

    deinit {
        // No block on the reactor holds `self` any more; the descriptor is still open unless failed.
        guard failure == nil else { return }
        let reactor = self.reactor
        let fd = self.fd
        reactor.execute { reactor.closeDescriptor(fd) }
    }

    // MARK: Connecting

    /// Resolves `host`, connects to its addresses in turn (each gets a share of `timeout`) and,
    /// when `tls` is given, completes the TLS handshake with verification.
    static func connect(
        host: String, port: Int, tls: TLSOptions?, hostIsIP: Bool, timeout: Duration,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws -> Transport {
        let deadline = ContinuousClock.now + timeout
        let addresses: [SocketAddress]
        do {
            addresses = try await DNSResolver.resolve(host: host, port: port)
        } catch let error as NetworkError {
            throw SocketIOError(error)
        }
        var lastError: any Error = SocketIOError.connectFailed("no address for \(host)")
        if tls?.insecure == true {
            log(.warning, "TLS certificate verification is disabled for \(host) (insecure)")
        }
        for (index, address) in addresses.enumerated() {
            try Task.checkCancellation()
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw SocketIOError.timeout("connecting to \(host):\(port)") }
            let share = remaining / (addresses.count - index)
            do {
                let transport = try await connect(to: address, timeout: share)
                if let tls {
                    do {
                        try await transport.startTLS(host: host, hostIsIP: hostIsIP, options: tls)
                    } catch {
                        transport.abort(error)
                        throw error
                    }
                }
                return transport
            } catch let error as SocketIOError {
                switch error {
                case .tlsFailed, .tlsVerificationFailed: throw error
                default:
                    log(.debug, "connect to \(address.description) port \(port) failed: \(error)")
                    lastError = error
                }
            }
        }
        throw lastError
    }

    private static func connect(to address: SocketAddress, timeout: Duration) async throws -> Transport {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketIOError.connectFailed("socket(): \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
        let transport = Transport(fd: fd)
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) } ?? -1
        if result != 0 && errno != EINPROGRESS {
            let error = SocketIOError.connectFailed("\(address.description): \(errnoText())")
            transport.abort(error)
            throw error
        }
        try await transport.waitConnected(timeout: timeout, address: address.description)
        return transport
    }

    private func waitConnected(timeout: Duration, address: String) async throws {
        _ = try await operation { transport in
            transport.scheduleTimeout(timeout, error: SocketIOError.timeout("TCP connect to \(address)"))
            transport.awaitWritable {
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(transport.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 {
                    transport.completeRead(.success([]))
                } else {
                    transport.fail(SocketIOError.connectFailed("\(address): \(String(cString: strerror(error)))"))
                }
            }
        }
    }

    private func startTLS(host: String, hostIsIP: Bool, options: TLSOptions) async throws {
        _ = try await operation { transport in
            do throws(NetworkError) {
                transport.tls = try TLSSession(host: host, hostIsIP: hostIsIP, options: options)
            } catch {
                transport.fail(SocketIOError(error))
                return
            }
            transport.continueHandshake()
        }
    }

    private func continueHandshake() {
        guard let tls, pendingRead != nil else { return }
        do {
            while true {
                let step = try tls.handshake()
                flushTLSOutput()
                switch step {
                case .done:
                    completeRead(.success([]))
                    return
                case .closed:
                    throw SocketIOError.tlsFailed("the server closed the connection during the handshake")
                case .wantRead:
                    switch try receiveRaw() {
                    case .data(let bytes): bytes.withUnsafeBytes { tls.feed($0) }
                    case .wouldBlock:
                        awaitReadable { [unowned self] in self.continueHandshake() }
                        return
                    case .endOfStream:
                        throw SocketIOError.tlsFailed("the server closed the connection during the handshake")
                    }
                }
            }
        } catch {
            fail(error)
        }
    }

    // MARK: Reading

    /// The next bytes from the peer (plaintext under TLS); an empty array at the end of the stream.
    /// Cancelling the calling task aborts the transport.
    func read() async throws -> [UInt8] {
        try await operation { transport in transport.continueRead() }
    }

    private func continueRead() {
        guard pendingRead != nil else { return }
        do {
            switch try readChunk() {
            case .data(let bytes): completeRead(.success(bytes))
            case .endOfStream: completeRead(.success([]))
            case .wouldBlock: awaitReadable { [unowned self] in self.continueRead() }
            }
        } catch {
            fail(error)
        }
    }

    /// Switches to push mode: from now on every chunk read is handed to `handler` on the
    /// reactor thread as soon as it arrives (an empty chunk at the end of the stream, then
    /// nothing more); a failure is handed over as `.failure`. `start` runs first, on the same
    /// thread. `read()` must not be used afterwards.
    func startReceiving(start: @escaping @Sendable () -> Void, _ handler: @escaping @Sendable (Result<[UInt8], any Error>) -> Void) {
        reactor.execute {
            start()
            if let failure = self.failure {
                handler(.failure(failure))
                return
            }
            self.pushHandler = handler
            self.pump()
        }
    }

    /// Push mode: stops reading while `paused` (what the peer sends waits in the kernel's buffer
    /// and TCP slows the peer down), so a consumer that falls behind bounds what is buffered.
    func setReceivingPaused(_ paused: Bool) {
        reactor.execute { [weak self] in
            guard let self, self.receivingPaused != paused else { return }
            self.receivingPaused = paused
            if !paused { self.pump() }
        }
    }

    private func pump() {
        guard let handler = pushHandler, !receivingPaused else { return }
        do {
            // A bounded number of chunks per turn, so that queued writes (pongs) are not starved.
            for _ in 0..<16 {
                switch try readChunk() {
                case .data(let bytes):
                    handler(.success(bytes))
                    guard pushHandler != nil, !receivingPaused else { return }
                case .endOfStream:
                    pushHandler = nil
                    handler(.success([]))
                    return
                case .wouldBlock:
                    awaitReadable { [unowned self] in self.pump() }
                    return
                }
            }
            reactor.execute { [weak self] in self?.pump() }
        } catch {
            fail(error)
        }
    }

    /// One chunk of plaintext, decrypting under TLS.
    private func readChunk() throws -> RawRead {
        guard let tls else { return try receiveRaw() }
        while true {
            let step = try scratch.withUnsafeMutableBytes { try tls.read(into: $0) }
            flushTLSOutput()
            switch step {
            case .done(let count):
                return .data(Array(scratch[0..<count]))
            case .closed:
                return .endOfStream
            case .wantRead:
                switch try receiveRaw() {
                case .data(let bytes): bytes.withUnsafeBytes { tls.feed($0) }
                case .wouldBlock: return .wouldBlock
                case .endOfStream: return .endOfStream
                }
            }
        }
    }

    private enum RawRead {
        case data([UInt8])
        case wouldBlock
        case endOfStream
    }

    private func receiveRaw() throws -> RawRead {
        while true {
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { return .data(Array(scratch[0..<n])) }
            if n == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                readable = false
                return .wouldBlock
            default: throw SocketIOError.connectionLost("read: \(errnoText())")
            }
        }
    }

    // MARK: Writing

    /// Queues `bytes` for sending, in call order. Errors surface through `read()`.
    func send(_ bytes: [UInt8]) {
        reactor.execute { self.enqueue(bytes) }
    }

    private func enqueue(_ bytes: [UInt8]) {
        guard failure == nil, !closeWhenDrained else { return }
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

    private func flushTLSOutput() {
        guard let tls else { return }
        tls.takeOutput(into: &output)
        flushOutput()
    }

    private func flushOutput() {
        guard failure == nil else { return }
        if output.count - outputOffset > Transport.maxQueuedOutput {
            fail(SocketIOError.connectionLost("more than \(Transport.maxQueuedOutput) bytes waiting to be sent"))
            return
        }
        while outputOffset < output.count {
            let n = output.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + outputOffset }, raw.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                outputOffset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                writable = false
                awaitWritable { [unowned self] in self.flushOutput() }
                return
            }
            fail(SocketIOError.connectionLost("write: \(errnoText())"))
            return
        }
        output.removeAll(keepingCapacity: output.count <= 1 << 20)
        outputOffset = 0
        if closeWhenDrained && !lingering {
            lingering = true
            discardUntilPeerCloses()
        }
    }

    /// After `close()` has written everything: reads and drops what the peer still sends until it
    /// closes its side, then closes the socket.
    private func discardUntilPeerCloses() {
        guard failure == nil else { return }
        do {
            while true {
                switch try readChunk() {
                case .data: continue
                case .endOfStream:
                    fail(SocketIOError.connectionLost("closed"))
                    return
                case .wouldBlock:
                    awaitReadable { [unowned self] in self.discardUntilPeerCloses() }
                    return
                }
            }
        } catch {
            fail(error)
        }
    }

    // MARK: Closing

    /// Sends what is queued (and a TLS close_notify), then waits for the peer to close its side
    /// before closing the socket, for `linger` at most from now. Closing at once could reset the
    /// connection (a close with unread bytes sends RST), and RFC 6455 §7.1.1 asks a client to let
    /// the server close the TCP connection first. Reading stops: a push-mode handler gets nothing more.
    func close(linger: Duration = .seconds(2)) {
        abort(after: linger, SocketIOError.connectionLost("closed"))
        reactor.execute {
            guard self.failure == nil, !self.closeWhenDrained else { return }
            self.closeWhenDrained = true
            self.pushHandler = nil
            if let tls = self.tls {
                tls.shutdown()
                self.flushTLSOutput()
            } else {
                self.flushOutput()
            }
        }
    }

    /// Returns once the socket is closed: after `close()` (its linger bounds the wait), `abort` or
    /// a failure.
    func waitUntilClosed() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            reactor.execute {
                if self.failure == nil {
                    self.closeWaiters.append(continuation)
                } else {
                    continuation.resume()
                }
            }
        }
    }

    /// Closes the socket at once; a pending read fails with `error`.
    func abort(_ error: any Error) {
        reactor.execute { self.fail(error) }
    }

    /// Closes the socket after `delay` unless it is closed before.
    func abort(after delay: Duration, _ error: any Error) {
        reactor.schedule(after: delay) { [weak self] in
            self?.fail(error)
        }
    }

    // MARK: Reactor internals

    /// Runs `start` on the reactor thread with a pending-read slot; the slot's result is returned.
    private func operation(_ start: @escaping @Sendable (Transport) -> Void) async throws -> [UInt8] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                self.reactor.execute {
                    if let failure = self.failure {
                        continuation.resume(throwing: failure)
                        return
                    }
                    self.pendingRead = continuation
                    self.operationCount += 1
                    start(self)
                }
            }
        } onCancel: {
            self.abort(CancellationError())
        }
    }

    private func completeRead(_ result: Result<[UInt8], any Error>) {
        let continuation = pendingRead
        pendingRead = nil
        continuation?.resume(with: result)
    }

    private func scheduleTimeout(_ timeout: Duration, error: any Error) {
        let operation = operationCount
        reactor.schedule(after: timeout) { [weak self] in
            guard let self, self.pendingRead != nil, self.operationCount == operation else { return }
            self.fail(error)
        }
    }

    /// Runs `handler` once the socket is readable: now if it has been since the last EAGAIN.
    private func awaitReadable(_ handler: @escaping () -> Void) {
        if readable {
            handler()
        } else {
            onReadable = handler
        }
    }

    private func awaitWritable(_ handler: @escaping () -> Void) {
        if writable {
            handler()
        } else {
            onWritable = handler
        }
    }

    private func handle(_ events: UInt32) {
        let errorBits = UInt32(SIO_EV_ERROR)
        if events & (UInt32(SIO_EV_READ) | errorBits) != 0 {
            readable = true
            let handler = onReadable
            onReadable = nil
            handler?()
        }
        if events & (UInt32(SIO_EV_WRITE) | errorBits) != 0 {
            writable = true
            let handler = onWritable
            onWritable = nil
            handler?()
        }
    }

    /// Marks the transport failed, fails the pending read and closes the descriptor (once).
    private func fail(_ error: any Error) {
        guard failure == nil else { return }
        let error = (error as? NetworkError).map(SocketIOError.init) ?? error
        failure = error
        onReadable = nil
        onWritable = nil
        output = []
        outputOffset = 0
        tls = nil
        completeRead(.failure(error))
        let handler = pushHandler
        pushHandler = nil
        handler?(.failure(error))
        reactor.closeDescriptor(fd)
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}

func errnoText() -> String {
    String(cString: strerror(errno))
}

extension Duration {
    /// Whole nanoseconds, clamped at zero (for timers).
    var nanoseconds: Int {
        let (seconds, attoseconds) = components
        return max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// Whole milliseconds.
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
