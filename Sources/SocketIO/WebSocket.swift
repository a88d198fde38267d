import Network

/// A complete WebSocket message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])
}

/// A WebSocket client connection (RFC 6455) over TCP or TLS.
///
/// `receive()` must be called by one task at a time; it answers pings (also between the fragments
/// of a message) and the close handshake by itself. `send` may be called from any task. Every
/// protocol violation by the server is answered with the matching close code (1002, 1007, 1009)
/// and thrown as `SocketIOError.protocolViolation`.
public final class WebSocket: @unchecked Sendable {
    private let transport: Transport
    private let maxMessageBytes: Int
    // Reader state: touched only by the task calling `receive()` or, in push mode, by the reactor thread.
    private var decoder: WebSocketFrameDecoder
    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    /// The text message being received, checked as its bytes arrive.
    private var text = UTF8StreamValidator()
    /// Payload bytes of the incomplete frame that `text` has already checked.
    private var checkedPrefix = 0
    // Shared state.
    private let closeSent = Locked(false)
    private let activity = Locked(ContinuousClock.now)

    private init(transport: Transport, maxMessageBytes: Int, leftover: [UInt8]) {
        self.transport = transport
        self.maxMessageBytes = maxMessageBytes
        decoder = WebSocketFrameDecoder(maxPayload: maxMessageBytes)
        decoder.append(leftover)
    }

    deinit { transport.abort(SocketIOError.connectionLost("WebSocket released")) }

    /// Connects to a `ws://` or `wss://` URL (also `http(s)://`), sending `headers` with the
    /// upgrade request. `timeout` covers DNS, TCP, TLS and the HTTP upgrade.
    public static func connect(
        url: String,
        headers: [String: String] = [:],
        tls: TLSOptions = TLSOptions(),
        timeout: Duration = .seconds(10),
        maxMessageBytes: Int = 16 << 20,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void = { _, _ in }
    ) async throws -> WebSocket {
        let endpoint = try Endpoint(parsing: url)
        return try await connect(
            endpoint: endpoint, headers: headers.sorted { $0.key < $1.key }, tls: tls, timeout: timeout,
            maxMessageBytes: maxMessageBytes, log: log)
    }

    static func connect(
        endpoint: Endpoint, headers: [(String, String)], tls: TLSOptions, timeout: Duration,
        maxMessageBytes: Int, log: @escaping @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws -> WebSocket {
        for (name, value) in headers {
            guard Handshake.isToken(name), !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                throw SocketIOError.handshakeFailed(status: 0, message: "invalid request header \(name)")
            }
        }
        return try await withTimeout(timeout, "connecting to \(endpoint.hostHeader)") {
            let transport = try await Transport.connect(
                host: endpoint.host, port: endpoint.port, tls: endpoint.secure ? tls : nil,
                hostIsIP: endpoint.hostIsIPLiteral, timeout: timeout, log: log)
            do {
                let leftover = try await Handshake.perform(on: transport, endpoint: endpoint, headers: headers)
                return WebSocket(transport: transport, maxMessageBytes: maxMessageBytes, leftover: leftover)
            } catch {
                transport.abort(error)
                throw error
            }
        }
    }

    /// When bytes last arrived from the server.
    var lastActivity: ContinuousClock.Instant { activity.withLock { $0 } }

    // MARK: Receiving

    /// The next complete message. Throws `SocketIOError.closedByPeer` after a close handshake,
    /// `.protocolViolation` after a violation (both once the close frame sent in answer is written
    /// and the connection closed), `.connectionLost` when the connection broke.
    public func receive() async throws -> WebSocketMessage {
        let (opcode, payload) = try await receiveRaw()
        if opcode == .text { return .text(String(decoding: payload, as: UTF8.self)) }
        return .binary(payload)
    }

    /// The next complete message as an opcode (text or binary) and its bytes (text is valid UTF-8).
    func receiveRaw() async throws -> (WebSocketOpcode, [UInt8]) {
        while true {
            let next: (WebSocketOpcode, [UInt8])?
            do {
                next = try nextMessage()
            } catch {
                // The close handshake or a violation: a close frame is on its way out. Return once
                // it is written and the connection closed (bounded by the close's linger), so that
                // a caller exiting right after this cannot cut the frame off.
                await transport.waitUntilClosed()
                throw error
            }
            if let message = next { return message }
            let bytes = try await transport.read()
            guard !bytes.isEmpty else {
                throw SocketIOError.connectionLost("the server closed the connection without a close frame")
            }
            let now = ContinuousClock.now
            activity.withLock { $0 = now }
            decoder.append(bytes)
        }
    }

    /// Push mode: every complete message is handed to `onMessage` on the reactor thread as
    /// soon as it is decoded; a non-nil result stops reading (the connection is closed) and becomes
    /// the reason given to `onEnd`. `onEnd` is called exactly once. `receive()` must not be used
    /// afterwards.
    func startReceiving(
        onMessage: @escaping @Sendable (WebSocketOpcode, [UInt8]) -> SocketIOError?,
        onEnd: @escaping @Sendable (SocketIOError) -> Void
    ) {
        let ended = Locked(false)
        let finish: @Sendable (SocketIOError) -> Void = { reason in
            guard !ended.withLock({ done in defer { done = true }; return done }) else { return }
            onEnd(reason)
        }
        // Decodes what is buffered; returns false once reading must stop.
        let deliver: @Sendable () -> Bool = { [self] in
            do {
                while let (opcode, payload) = try nextMessage() {
                    if let stop = onMessage(opcode, payload) {
                        close(code: stop.isProtocolViolation ? 1002 : 1000)
                        finish(stop)
                        return false
                    }
                }
                return true
            } catch {
                finish(WebSocket.classify(error))
                return false
            }
        }
        // Messages read in pull mode may already wait in the decoder.
        transport.startReceiving(start: { _ = deliver() }) { [self] result in
            guard !ended.withLock({ $0 }) else { return }
            switch result {
            case .failure(let error):
                finish(WebSocket.classify(error))
            case .success(let bytes):
                guard !bytes.isEmpty else {
                    finish(.connectionLost("the server closed the connection without a close frame"))
                    return
                }
                let now = ContinuousClock.now
                activity.withLock { $0 = now }
                decoder.append(bytes)
                _ = deliver()
            }
        }
    }

    static func classify(_ error: any Error) -> SocketIOError {
        if let error = error as? SocketIOError { return error }
        if error is CancellationError { return .disconnectedByClient }
        return .connectionLost("\(error)")
    }

    private func nextMessage() throws -> (WebSocketOpcode, [UInt8])? {
        while true {
            let next: WebSocketFrame?
            do {
                next = try decoder.next()
            } catch {
                throw failConnection(error)
            }
            guard let frame = next else {
                try checkIncompleteText()
                return nil
            }
            switch frame.opcode {
            case .ping:
                sendFrames([(.pong, frame.payload)])
            case .pong:
                continue
            case .close:
                throw handleClose(frame.payload)
            case .text, .binary:
                guard fragmentOpcode == nil else {
                    throw failConnection(WebSocketProtocolError(code: 1002, message: "a new message started inside a fragmented message"))
                }
                if frame.opcode == .text { try checkText(frame.payload, startsMessage: true, fin: frame.fin) }
                if frame.fin { return (frame.opcode, frame.payload) }
                fragmentOpcode = frame.opcode
                fragments = frame.payload
            case .continuation:
                guard let opcode = fragmentOpcode else {
                    throw failConnection(WebSocketProtocolError(code: 1002, message: "continuation frame without a message"))
                }
                guard fragments.count + frame.payload.count <= maxMessageBytes else {
                    throw failConnection(WebSocketProtocolError(code: 1009, message: "message exceeds the limit of \(maxMessageBytes) bytes"))
                }
                if opcode == .text { try checkText(frame.payload, startsMessage: false, fin: frame.fin) }
                fragments.append(contentsOf: frame.payload)
                if frame.fin {
                    let payload = fragments
                    fragments = []
                    fragmentOpcode = nil
                    return (opcode, payload)
                }
            }
        }
    }

    /// Checks the rest of a complete text frame (the part `checkIncompleteText` has not seen);
    /// the message must also end on a character boundary.
    private func checkText(_ payload: [UInt8], startsMessage: Bool, fin: Bool) throws {
        if startsMessage && checkedPrefix == 0 { text = UTF8StreamValidator() }
        let rest = payload[min(checkedPrefix, payload.count)...]
        checkedPrefix = 0
        guard text.feed(rest), !fin || text.isAtBoundary else {
            throw failConnection(WebSocketProtocolError(code: 1007, message: "text message is not valid UTF-8"))
        }
    }

    /// Checks what has arrived of an incomplete text frame, so that invalid UTF-8 fails the
    /// connection at once rather than when the frame (or the message) is complete.
    private func checkIncompleteText() throws {
        guard let (opcode, prefix) = decoder.incompleteFramePrefix() else { return }
        let isText = opcode == .text ? fragmentOpcode == nil : opcode == .continuation && fragmentOpcode == .text
        guard isText, prefix.count > checkedPrefix else { return }
        if opcode == .text && checkedPrefix == 0 { text = UTF8StreamValidator() }
        let unchecked = prefix.dropFirst(checkedPrefix)
        checkedPrefix = prefix.count
        guard text.feed(unchecked) else {
            throw failConnection(WebSocketProtocolError(code: 1007, message: "text message is not valid UTF-8"))
        }
    }

    private func handleClose(_ payload: [UInt8]) -> any Error {
        var code: UInt16?
        var reason = ""
        if payload.count == 1 {
            return failConnection(WebSocketProtocolError(code: 1002, message: "close frame with a 1-byte payload"))
        }
        if payload.count >= 2 {
            let value = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard WebSocketCloseCode.isValidReceived(value) else {
                return failConnection(WebSocketProtocolError(code: 1002, message: "invalid close code \(value)"))
            }
            let text = payload[2...]
            guard Encoding.isValidUTF8(text) else {
                return failConnection(WebSocketProtocolError(code: 1007, message: "close reason is not valid UTF-8"))
            }
            code = value
            reason = String(decoding: text, as: UTF8.self)
        }
        let alreadySent = closeSent.withLock { sent in
            defer { sent = true }
            return sent
        }
        if !alreadySent {
            var reply: [UInt8] = []
            if let code { reply = [UInt8(code >> 8), UInt8(code & 0xFF)] }
            sendFramesUnchecked([(.close, reply)])
        }
        transport.close()
        return SocketIOError.closedByPeer(code: code, reason: reason)
    }

    /// Answers a violation with a close frame carrying its code, closes, and returns the error.
    private func failConnection(_ error: WebSocketProtocolError) -> SocketIOError {
        let alreadySent = closeSent.withLock { sent in
            defer { sent = true }
            return sent
        }
        if !alreadySent {
            sendFramesUnchecked([(.close, Handshake.closePayload(code: error.code, reason: ""))])
        }
        transport.close()
        return .protocolViolation("WebSocket \(error.code): \(error.message)")
    }

    // MARK: Sending

    /// Sends one message as a single frame. Throws `.connectionLost` once closing has begun.
    public func send(_ message: WebSocketMessage) throws {
        switch message {
        case .text(let text): try sendMessages([(.text, Array(text.utf8))])
        case .binary(let bytes): try sendMessages([(.binary, bytes)])
        }
    }

    /// Sends data messages back to back, in one write.
    func sendMessages(_ messages: [(WebSocketOpcode, [UInt8])]) throws {
        guard !closeSent.withLock({ $0 }) else { throw SocketIOError.connectionLost("the WebSocket is closing") }
        sendFramesUnchecked(messages)
    }

    private func sendFrames(_ frames: [(WebSocketOpcode, [UInt8])]) {
        guard !closeSent.withLock({ $0 }) else { return }
        sendFramesUnchecked(frames)
    }

    private func sendFramesUnchecked(_ frames: [(WebSocketOpcode, [UInt8])]) {
        var generator = SystemRandomNumberGenerator()
        var out: [UInt8] = []
        for (opcode, payload) in frames {
            WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, mask: generator.next(), into: &out)
        }
        transport.send(out)
    }

    // MARK: Closing

    /// Starts the close handshake with `code`; the connection is closed when the server answers,
    /// or after `timeout` at the latest.
    public func close(code: UInt16 = 1000, reason: String = "", timeout: Duration = .seconds(2)) {
        let alreadySent = closeSent.withLock { sent in
            defer { sent = true }
            return sent
        }
        if !alreadySent {
            sendFramesUnchecked([(.close, Handshake.closePayload(code: code, reason: reason))])
        }
        transport.abort(after: timeout, SocketIOError.connectionLost("close handshake timed out"))
    }

    /// Push mode: stops or resumes reading (see `Transport.setReceivingPaused`).
    func setReceivingPaused(_ paused: Bool) {
        transport.setReceivingPaused(paused)
    }

    /// Closes the connection at once; a pending `receive()` throws `error`.
    func abort(_ error: SocketIOError) {
        transport.abort(error)
    }
}

/// The HTTP/1.1 upgrade handshake (RFC 6455 §4).
enum Handshake {
    static let maxResponseHeader = 16_384

    /// Sends the upgrade request, checks the response and returns bytes received after it.
    static func perform(on transport: Transport, endpoint: Endpoint, headers: [(String, String)]) async throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let key = Encoding.base64(nonce)
        var request = "GET \(endpoint.requestTarget) HTTP/1.1\r\n"
        request += "Host: \(endpoint.hostHeader)\r\n"
        request += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        let reserved: Set<String> = ["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"]
        for (name, value) in headers where !reserved.contains(name.lowercased()) {
            // A CR or LF would end the header early and let the rest pose as another header.
            guard !(name + value).utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw SocketIOError.connectFailed("the \(name) header holds a control character; refusing to send it")
            }
            request += "\(name): \(value)\r\n"
        }
        request += "\r\n"
        transport.send(Array(request.utf8))

        var received: [UInt8] = []
        var headerEnd: Int?
        while headerEnd == nil {
            let bytes = try await transport.read()
            guard !bytes.isEmpty else {
                throw SocketIOError.handshakeFailed(status: 0, message: "the server closed the connection during the upgrade")
            }
            let searchFrom = max(0, received.count - 3)
            received.append(contentsOf: bytes)
            headerEnd = findHeaderEnd(received, from: searchFrom)
            if headerEnd == nil && received.count > maxResponseHeader {
                throw SocketIOError.handshakeFailed(status: 0, message: "response header too large")
            }
        }
        guard let end = headerEnd else { throw SocketIOError.handshakeFailed(status: 0, message: "no response") }
        let response = try parseResponse(Array(received[0..<end]))
        var leftover = Array(received[(end + 4)...])
        guard response.status == 101 else {
            if let length = response.headers["content-length"].flatMap({ Int($0) }), length <= 65_536 {
                while leftover.count < length {
                    let more = try await transport.read()
                    if more.isEmpty { break }
                    leftover.append(contentsOf: more)
                }
            }
            let body = String(decoding: leftover.prefix(4096), as: UTF8.self)
            throw SocketIOError.handshakeFailed(status: response.status, message: body)
        }
        try validate(response, key: key)
        return leftover
    }

    struct Response {
        var status: Int
        var headers: [String: String]
    }

    static func findHeaderEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = start
        while i + 3 < bytes.count {
            if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }

    static func parseResponse(_ bytes: [UInt8]) throws -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.first else { throw SocketIOError.handshakeFailed(status: 0, message: "empty response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw SocketIOError.handshakeFailed(status: 0, message: "malformed status line: \(statusLine.prefix(100))")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw SocketIOError.handshakeFailed(status: status, message: "malformed header line")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if let existing = headers[name] {
                headers[name] = existing + ", " + value
            } else {
                headers[name] = value
            }
        }
        return Response(status: status, headers: headers)
    }

    static func validate(_ response: Response, key: String) throws {
        guard response.headers["upgrade"]?.lowercased() == "websocket" else {
            throw SocketIOError.handshakeFailed(status: 101, message: "missing Upgrade: websocket")
        }
        let connection = response.headers["connection"]?.lowercased().split(separator: ",").map { $0.trimmingSpaces() } ?? []
        guard connection.contains("upgrade") else {
            throw SocketIOError.handshakeFailed(status: 101, message: "missing Connection: Upgrade")
        }
        guard response.headers["sec-websocket-accept"] == Encoding.webSocketAccept(for: key) else {
            throw SocketIOError.handshakeFailed(status: 101, message: "wrong Sec-WebSocket-Accept")
        }
        if let extensions = response.headers["sec-websocket-extensions"], !extensions.isEmpty {
            throw SocketIOError.handshakeFailed(status: 101, message: "the server chose extensions that were not offered: \(extensions)")
        }
    }

    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }

    static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        var text = Array(reason.utf8.prefix(123))
        while !Encoding.isValidUTF8(text) { text.removeLast() }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + text
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        guard let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
