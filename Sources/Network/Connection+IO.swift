import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// A connection's I/O: the connect and the TLS handshake, reading, writing and its end.
extension Connection {
    // MARK: Connecting

    /// Runs `step` with `setup` waiting for it, failing with a timeout at `deadline`.
    func beginSetup(_ continuation: CheckedContinuation<Void, any Error>, until deadline: ContinuousClock.Instant,
                    what: String, _ step: (Connection) -> Void) {
        guard case .opening = phase else {
            continuation.resume(throwing: NetworkError.cancelled)
            return
        }
        setup = continuation
        setupTimer = loop.schedule(at: deadline) { [weak self] in self?.fail(.timeout(what)) }
        step(self)
    }

    private func finishSetup() {
        if let setupTimer { loop.cancel(setupTimer) }
        setupTimer = nil
        let continuation = setup
        setup = nil
        continuation?.resume()
    }

    /// Registers the socket and waits until the connect completes.
    func finishConnecting(_ address: SocketAddress) {
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

    func startTLS(host: String, hostIsIP: Bool, options: TLSOptions) {
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

    // MARK: Reading

    func pump() {
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

    /// Sends what is queued: the TLS session's records first moved into `output`, when there is
    /// a session.
    func flushTLSOutput() {
        tls?.takeOutput(into: &output)
        flushOutput()
    }

    func flushOutput() {
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
                // With TLS, what was written since is still in the session: take it too.
                onWritable = { [weak self] in self?.flushTLSOutput() }
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

    func fail(_ error: NetworkError) {
        finish(error)
    }

    /// Closes the descriptor (once), ends a pending set-up and tells the handler.
    func finish(_ error: NetworkError?) {
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
