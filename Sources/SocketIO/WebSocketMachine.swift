/// The client side of one WebSocket connection (RFC 6455) as a value with no I/O.
///
/// Inputs are the bytes the server sent, the end of the byte stream, the time, and commands
/// (send, close); outputs are actions for the shell that owns the connection: bytes to write,
/// complete messages, and how the connection ends. It does the opening handshake (request out,
/// response in, validated), decodes and reassembles frames, checks text as it arrives (invalid
/// UTF-8 fails at once, even inside an incomplete frame), answers pings, and runs the close
/// handshake. Every violation by the server is answered with a close frame carrying the matching
/// code (1002, 1007, 1009) and ends the session with `SocketIOError.protocolViolation`.
struct WebSocketMachine {
    enum Action: Equatable {
        /// Bytes to write to the connection, in order.
        case write([UInt8])
        /// The upgrade succeeded; messages may be sent from now on.
        case opened
        /// A complete data message (text is valid UTF-8).
        case message(WebSocketOpcode, [UInt8])
        /// The session ended: write what came before, then close the connection (the close
        /// handshake, if any, is over or its close frame is the last thing written).
        case closed(SocketIOError)
        /// The session ended: drop the connection at once.
        case abort(SocketIOError)
    }

    private enum State {
        /// The upgrade request is out; collecting the response header.
        case upgrading
        /// A response other than 101 came; collecting up to `length` bytes of its body.
        case refused(status: Int, length: Int)
        case open
        /// This side sent its close frame; waiting for the server's until `deadline`.
        case closing(deadline: ContinuousClock.Instant)
        case closed
    }

    /// Bytes of the largest response header accepted.
    static let maxResponseHeader = 16_384
    /// Bytes of a refusal's body kept for the error message.
    static let maxRefusalBody = 65_536

    let maxMessageBytes: Int
    private let key: String
    private var state = State.upgrading
    private var received: [UInt8] = []
    private var decoder: WebSocketFrameDecoder
    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    /// The text message being received, checked as its bytes arrive.
    private var text = UTF8StreamValidator()
    /// Payload bytes of the incomplete frame that `text` has already checked.
    private var checkedPrefix = 0
    private var masks: SplitMix64

    /// - Parameter seed: seeds the handshake's nonce and the frames' masks (give it a value from
    ///   the system's random source; tests give a fixed one).
    init(maxMessageBytes: Int, seed: UInt64) {
        self.maxMessageBytes = max(0, maxMessageBytes)
        decoder = WebSocketFrameDecoder(maxPayload: self.maxMessageBytes)
        masks = SplitMix64(seed: seed)
        var nonce: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: masks.next().bigEndian) { nonce.append(contentsOf: $0) } }
        key = Encoding.base64(nonce)
    }

    /// Whether the session has ended.
    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// When the close handshake this side started gives up (see `tick`), nil when none runs.
    var closeDeadline: ContinuousClock.Instant? {
        if case .closing(let deadline) = state { return deadline }
        return nil
    }

    // MARK: Opening

    /// The upgrade request for `endpoint` with the extra `headers`. Throws `.handshakeFailed` for
    /// a header name that is not a token and `.connectFailed` for a control character in a header.
    func upgradeRequest(endpoint: Endpoint, headers: [(String, String)]) throws(SocketIOError) -> [UInt8] {
        var request = "GET \(endpoint.requestTarget) HTTP/1.1\r\n"
        request += "Host: \(endpoint.hostHeader)\r\n"
        request += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        let reserved: Set<String> = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"]
        for (name, value) in headers {
            guard Handshake.isToken(name), !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw .handshakeFailed(status: 0, message: "invalid request header \(name)")
            }
            guard !reserved.contains(name.lowercased()) else { continue }
            // A control character could end the header early and let the rest pose as another header.
            guard !(name + value).utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw .connectFailed("the \(name) header holds a control character; refusing to send it")
            }
            request += "\(name): \(value)\r\n"
        }
        request += "\r\n"
        return Array(request.utf8)
    }

    // MARK: Receiving

    /// Bytes from the server. Frames are decoded until `messageLimit` messages came out; the rest
    /// waits for the next call (a shell that hands out one message at a time passes 1, so that a
    /// violation after a message is acted on only once the message was consumed).
    mutating func receive(_ bytes: [UInt8], now: ContinuousClock.Instant, messageLimit: Int = .max) -> [Action] {
        switch state {
        case .upgrading:
            let searchFrom = max(0, received.count - 3)
            received.append(contentsOf: bytes)
            guard let end = Handshake.findHeaderEnd(received, from: searchFrom) else {
                guard received.count <= Self.maxResponseHeader else {
                    return end(.abort(.handshakeFailed(status: 0, message: "response header too large")))
                }
                return []
            }
            return upgradeResponse(headerEnd: end, messageLimit: messageLimit)
        case .refused(let status, let length):
            received.append(contentsOf: bytes.prefix(max(0, length - received.count)))
            guard received.count >= length else { return [] }
            return end(.abort(refusal(status)))
        case .open, .closing:
            decoder.append(bytes)
            return decodeFrames(messageLimit: messageLimit)
        case .closed:
            return []
        }
    }

    /// The server closed the byte stream, or it broke (`error`).
    mutating func connectionEnded(_ error: SocketIOError?) -> [Action] {
        switch state {
        case .upgrading:
            return end(.abort(error ?? .handshakeFailed(status: 0, message: "the server closed the connection during the upgrade")))
        case .refused(let status, _):
            return end(.abort(refusal(status)))
        case .open, .closing:
            return end(.abort(error ?? .connectionLost("the server closed the connection without a close frame")))
        case .closed:
            return []
        }
    }

    /// The time is `now`: gives up a close handshake the server did not answer in time.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard case .closing(let deadline) = state, now >= deadline else { return [] }
        return end(.abort(.connectionLost("close handshake timed out")))
    }

    private mutating func upgradeResponse(headerEnd end: Int, messageLimit: Int) -> [Action] {
        let response: Handshake.Response
        do {
            response = try Handshake.parseResponse(Array(received[0..<end]))
        } catch {
            return self.end(.abort(error))
        }
        let leftover = Array(received[(end + 4)...])
        received = []
        guard response.status == 101 else {
            let length = response.headers["content-length"].flatMap { Int($0) }.map { min(max(0, $0), Self.maxRefusalBody) } ?? 0
            state = .refused(status: response.status, length: length)
            received = Array(leftover.prefix(length))
            guard received.count >= length else { return [] }
            return self.end(.abort(refusal(response.status)))
        }
        do {
            try Handshake.validate(response, key: key)
        } catch {
            return self.end(.abort(error))
        }
        state = .open
        decoder.append(leftover)
        return [.opened] + decodeFrames(messageLimit: messageLimit)
    }

    private func refusal(_ status: Int) -> SocketIOError {
        .handshakeFailed(status: status, message: String(decoding: received.prefix(4096), as: UTF8.self))
    }

    private mutating func decodeFrames(messageLimit: Int) -> [Action] {
        var actions: [Action] = []
        var messages = 0
        while !isClosed && messages < messageLimit {
            let next: WebSocketFrame?
            do {
                next = try decoder.next()
            } catch {
                actions += fail(error)
                break
            }
            guard let frame = next else {
                actions += checkIncompleteText()
                break
            }
            let handled = handle(frame)
            messages += handled.count { if case .message = $0 { return true } else { return false } }
            actions += handled
        }
        return actions
    }

    private mutating func handle(_ frame: WebSocketFrame) -> [Action] {
        switch frame.opcode {
        case .ping:
            guard case .open = state else { return [] }
            return [.write(encode([(.pong, frame.payload)]))]
        case .pong:
            return []
        case .close:
            return handleClose(frame.payload)
        case .text, .binary:
            guard fragmentOpcode == nil else {
                return fail(WebSocketProtocolError(code: 1002, message: "a new message started inside a fragmented message"))
            }
            if frame.opcode == .text, let violation = checkText(frame.payload, startsMessage: true, fin: frame.fin) {
                return fail(violation)
            }
            if frame.fin { return [.message(frame.opcode, frame.payload)] }
            fragmentOpcode = frame.opcode
            fragments = frame.payload
            return []
        case .continuation:
            guard let opcode = fragmentOpcode else {
                return fail(WebSocketProtocolError(code: 1002, message: "continuation frame without a message"))
            }
            guard frame.payload.count <= maxMessageBytes - fragments.count else {
                return fail(WebSocketProtocolError(code: 1009, message: "message exceeds the limit of \(maxMessageBytes) bytes"))
            }
            if opcode == .text, let violation = checkText(frame.payload, startsMessage: false, fin: frame.fin) {
                return fail(violation)
            }
            fragments.append(contentsOf: frame.payload)
            guard frame.fin else { return [] }
            let payload = fragments
            fragments = []
            fragmentOpcode = nil
            return [.message(opcode, payload)]
        }
    }

    /// Checks the rest of a complete text frame (the part `checkIncompleteText` has not seen);
    /// the message must also end on a character boundary.
    private mutating func checkText(_ payload: [UInt8], startsMessage: Bool, fin: Bool) -> WebSocketProtocolError? {
        if startsMessage && checkedPrefix == 0 { text = UTF8StreamValidator() }
        let rest = payload[min(checkedPrefix, payload.count)...]
        checkedPrefix = 0
        guard text.feed(rest), !fin || text.isAtBoundary else {
            return WebSocketProtocolError(code: 1007, message: "text message is not valid UTF-8")
        }
        return nil
    }

    /// Checks what has arrived of an incomplete text frame, so that invalid UTF-8 fails the
    /// connection at once rather than when the frame (or the message) is complete.
    private mutating func checkIncompleteText() -> [Action] {
        guard let (opcode, prefix) = decoder.incompleteFramePrefix() else { return [] }
        let isText = opcode == .text ? fragmentOpcode == nil : opcode == .continuation && fragmentOpcode == .text
        guard isText, prefix.count > checkedPrefix else { return [] }
        if opcode == .text && checkedPrefix == 0 { text = UTF8StreamValidator() }
        let unchecked = prefix.dropFirst(checkedPrefix)
        checkedPrefix = prefix.count
        guard text.feed(unchecked) else {
            return fail(WebSocketProtocolError(code: 1007, message: "text message is not valid UTF-8"))
        }
        return []
    }

    private mutating func handleClose(_ payload: [UInt8]) -> [Action] {
        var code: UInt16?
        var reason = ""
        if payload.count == 1 {
            return fail(WebSocketProtocolError(code: 1002, message: "close frame with a 1-byte payload"))
        }
        if payload.count >= 2 {
            let value = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard WebSocketCloseCode.isValidReceived(value) else {
                return fail(WebSocketProtocolError(code: 1002, message: "invalid close code \(value)"))
            }
            let text = payload[2...]
            guard Encoding.isValidUTF8(text) else {
                return fail(WebSocketProtocolError(code: 1007, message: "close reason is not valid UTF-8"))
            }
            code = value
            reason = String(decoding: text, as: UTF8.self)
        }
        var actions: [Action] = []
        if case .open = state {
            // Echo the code (RFC 6455 §5.5.1).
            actions.append(.write(encode([(.close, code.map { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } ?? [])])))
        }
        return actions + end(.closed(.closedByPeer(code: code, reason: reason)))
    }

    /// Answers a violation with a close frame carrying its code and ends the session.
    private mutating func fail(_ error: WebSocketProtocolError) -> [Action] {
        var actions: [Action] = []
        if case .open = state {
            actions.append(.write(encode([(.close, Handshake.closePayload(code: error.code, reason: ""))])))
        }
        return actions + end(.closed(.protocolViolation("WebSocket \(error.code): \(error.message)")))
    }

    private mutating func end(_ action: Action) -> [Action] {
        state = .closed
        received = []
        fragments = []
        return [action]
    }

    // MARK: Sending

    /// Frames data messages back to back (each in one frame). Throws `.connectionLost` before the
    /// upgrade and once closing has begun.
    mutating func send(_ messages: [(WebSocketOpcode, [UInt8])]) throws(SocketIOError) -> [UInt8] {
        switch state {
        case .open: return encode(messages)
        case .upgrading, .refused: throw .connectionLost("the WebSocket is not open yet")
        case .closing, .closed: throw .connectionLost("the WebSocket is closing")
        }
    }

    /// Starts the close handshake with `code`: the session ends when the server answers, or at
    /// `now + timeout` (`tick`). Before the upgrade is done it ends at once.
    mutating func close(code: UInt16 = 1000, reason: String = "", timeout: Duration, now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .open:
            state = .closing(deadline: now + timeout)
            return [.write(encode([(.close, Handshake.closePayload(code: code, reason: reason))]))]
        case .upgrading, .refused:
            return end(.abort(.disconnectedByClient))
        case .closing, .closed:
            return []
        }
    }

    private mutating func encode(_ frames: [(WebSocketOpcode, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for (opcode, payload) in frames {
            WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, mask: UInt32(truncatingIfNeeded: masks.next()), into: &out)
        }
        return out
    }
}

/// SplitMix64: a small deterministic random source, seeded from the system's (or a test's).
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
