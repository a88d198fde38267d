import JSONValue

/// One connected Socket.IO namespace over one Engine.IO connection: the handshake, the read loop
/// and packet sending. Created and driven by `SocketIOClient`.
final class SocketIOSession: Sendable {
    /// What the server sent before the CONNECT reply, or an acknowledgement.
    enum Incoming: Sendable {
        case event(SocketIOEvent)
        case ack(id: Int, payload: SocketIOPayload)
    }

    let engine: EngineIOConnection
    let namespace: String
    let socketId: String
    /// Identifies this connection among all connections of the client (for ack tokens).
    let epoch: Int
    /// The most bytes of attachments one packet may carry (the configuration's `maxMessageBytes`).
    private let attachmentByteLimit: Int
    private let log: @Sendable (SocketIOLogLevel, String) -> Void

    private init(engine: EngineIOConnection, namespace: String, socketId: String, epoch: Int, attachmentByteLimit: Int,
                 log: @escaping @Sendable (SocketIOLogLevel, String) -> Void) {
        self.engine = engine
        self.attachmentByteLimit = attachmentByteLimit
        self.namespace = namespace
        self.socketId = socketId
        self.epoch = epoch
        self.log = log
    }

    /// Connects and joins the namespace. Returns the session and the events the server sent
    /// before its CONNECT reply, in order. Throws `.connectionRefused` for CONNECT_ERROR (or an
    /// HTTP 401 upgrade answer).
    static func open(
        configuration: SocketIOConfiguration, credentials: SocketIOCredentials, epoch: Int,
        log: @escaping @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws -> (SocketIOSession, [Incoming]) {
        let endpoint = try Endpoint(parsing: configuration.url)
        guard endpoint.path == "/" else {
            throw SocketIOError.invalidURL("\(configuration.url): give the server origin only; the path is configured separately")
        }
        let namespace = configuration.namespace.isEmpty ? "/" : configuration.namespace
        let version: EngineIOVersion = configuration.protocolVersion == .v4 ? .v4 : .v3
        var query = credentials.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if version == .v3, let auth = credentials.auth?.objectValue {
            for key in auth.keys.sorted() where credentials.query[key] == nil {
                switch auth[key] {
                case .string(let text): query.append((key, text))
                case .number: if let text = auth[key]?.idString { query.append((key, text)) }
                case .bool(let flag): query.append((key, flag ? "true" : "false"))
                default: continue
                }
            }
        }
        let headers = credentials.headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let engine: EngineIOConnection
        do {
            engine = try await EngineIOConnection.open(
                endpoint: endpoint, path: configuration.path, query: query, headers: headers, version: version,
                tls: configuration.tls, timeout: configuration.connectTimeout,
                maxMessageBytes: configuration.maxMessageBytes, log: log)
        } catch SocketIOError.handshakeFailed(let status, let body) where status == 401 {
            let parsed = try? JSONValue.parse(Array(body.utf8))
            let message = parsed?["message"]?.stringValue ?? parsed?.stringValue ?? (body.isEmpty ? "unauthorized" : body)
            throw SocketIOError.connectionRefused(message: message, data: parsed)
        }
        do {
            var early = EarlyPackets()
            var assembler = SocketIOBinaryAssembler(byteLimit: configuration.maxMessageBytes)
            let socketId: String
            switch version {
            case .v4:
                try engine.send([.message(SocketIOCodec.encode(SocketIOPacket(type: .connect, namespace: namespace, data: credentials.auth)))])
                socketId = try await awaitConnect(engine: engine, namespace: namespace, keeping: namespace, epoch: epoch, assembler: &assembler, early: &early, log: log)
            case .v3:
                // The server connects "/" by itself; other namespaces are asked for afterwards.
                _ = try await awaitConnect(engine: engine, namespace: "/", keeping: namespace, epoch: epoch, assembler: &assembler, early: &early, log: log)
                if namespace != "/" {
                    try engine.send([.message(SocketIOCodec.encode(SocketIOPacket(type: .connect, namespace: namespace)))])
                    _ = try await awaitConnect(engine: engine, namespace: namespace, keeping: namespace, epoch: epoch, assembler: &assembler, early: &early, log: log)
                }
                socketId = engine.handshake.sid
            }
            let session = SocketIOSession(engine: engine, namespace: namespace, socketId: socketId, epoch: epoch,
                                          attachmentByteLimit: configuration.maxMessageBytes, log: log)
            if early.dropped > 0 {
                log(.warning, "dropped \(early.dropped) packets the server sent before its CONNECT reply (kept the first \(early.kept.count))")
            }
            return (session, early.kept)
        } catch {
            engine.close()
            throw error
        }
    }

    /// Reads until the CONNECT reply for `namespace`; keeps the events for `kept` that arrive first.
    private static func awaitConnect(
        engine: EngineIOConnection, namespace: String, keeping kept: String, epoch: Int,
        assembler: inout SocketIOBinaryAssembler, early: inout EarlyPackets, log: @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws -> String {
        while true {
            let (packet, attachments, size) = try await nextPacket(engine: engine, assembler: &assembler)
            switch packet.type {
            case .connect, .connectError, .disconnect:
                guard packet.namespace == namespace else { continue }
            case .event, .binaryEvent, .ack, .binaryAck:
                guard packet.namespace == kept else { continue }
            }
            switch packet.type {
            case .connect:
                if engine.version == .v3 { return engine.handshake.sid }
                guard let sid = packet.data?["sid"]?.stringValue, !sid.isEmpty else {
                    throw SocketIOError.protocolViolation("CONNECT reply without sid")
                }
                return sid
            case .connectError:
                throw refusal(packet.data)
            case .disconnect:
                throw SocketIOError.connectionRefused(message: "the server disconnected during the handshake", data: packet.data)
            case .event, .binaryEvent, .ack, .binaryAck:
                if let incoming = makeIncoming(packet, attachments, epoch: epoch) {
                    early.keep(incoming, size: size)
                }
            }
        }
    }

    /// CONNECT_ERROR data: `{"message": ..., "data": ...}` or a bare string.
    static func refusal(_ data: JSONValue?) -> SocketIOError {
        switch data {
        case .string(let message)?:
            return .connectionRefused(message: message, data: nil)
        case .object(let object)?:
            let message = object["message"]?.stringValue ?? data?.jsonText ?? "refused"
            return .connectionRefused(message: message, data: object["data"])
        case let other?:
            return .connectionRefused(message: other.jsonText, data: other)
        case nil:
            return .connectionRefused(message: "refused", data: nil)
        }
    }

    /// The next complete packet (with its attachments) from the server, and its size in bytes.
    private static func nextPacket(engine: EngineIOConnection, assembler: inout SocketIOBinaryAssembler) async throws
        -> (SocketIOPacket, [[UInt8]], Int) {
        var size = 0
        while true {
            switch try await engine.receive() {
            case .text(let bytes):
                size += bytes.count
                if let (packet, attachments) = try assembler.start(try SocketIOCodec.decode(bytes)) {
                    return (packet, attachments, size)
                }
            case .binary(let data):
                size += data.count
                if let (packet, attachments) = try assembler.add(data) { return (packet, attachments, size) }
            }
        }
    }

    static func makeIncoming(_ packet: SocketIOPacket, _ attachments: [[UInt8]], epoch: Int) -> Incoming? {
        guard var array = packet.data?.arrayValue else { return nil }
        switch packet.type {
        case .event, .binaryEvent:
            guard !array.isEmpty, let name = array.removeFirst().stringValue else { return nil }
            let token = packet.id.map { SocketIOAckToken(id: $0, epoch: epoch) }
            return .event(SocketIOEvent(name: name, args: array, attachments: attachments, ackToken: token))
        case .ack, .binaryAck:
            guard let id = packet.id else { return nil }
            return .ack(id: id, payload: SocketIOPayload(args: array, attachments: attachments))
        default:
            return nil
        }
    }

    /// Reads until the connection ends; returns why. `.disconnectedByServer` means the server sent
    /// DISCONNECT; `.heartbeatTimeout`, `.connectionLost` and others mean the transport broke;
    /// `.disconnectedByClient` that the calling task was cancelled.
    ///
    /// Packets are decoded on the reactor thread as they arrive and events go straight to
    /// `onEvent` (no extra thread hop); acknowledgements are handed to `onAck` in order, and all of
    /// them have been handed over when this returns.
    func run(
        onEvent: @escaping @Sendable (SocketIOEvent, Int) -> Void,
        onAck: @escaping @Sendable (Int, SocketIOPayload) async -> Void
    ) async -> SocketIOError {
        let (acks, ackSink) = AsyncStream<(Int, SocketIOPayload)>.makeStream()
        let ackConsumer = Task {
            for await (id, payload) in acks { await onAck(id, payload) }
        }
        let engine = self.engine
        let heartbeat = Task {
            try await engine.heartbeat()  // aborts the connection with .heartbeatTimeout
        }
        let reader = PacketReader(namespace: namespace, epoch: epoch, attachmentByteLimit: attachmentByteLimit, log: log)
        let reason = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SocketIOError, Never>) in
                engine.startReceiving(
                    onMessage: { message in
                        reader.handle(message, onEvent: onEvent, onAck: { ackSink.yield(($0, $1)) })
                    },
                    onEnd: { reason in
                        ackSink.finish()
                        continuation.resume(returning: reason)
                    })
            }
        } onCancel: {
            engine.webSocket.abort(.disconnectedByClient)
        }
        heartbeat.cancel()
        await ackConsumer.value
        return reason
    }

    /// Stops or resumes reading from the server (flow control: the consumer of events is behind).
    func setReceivingPaused(_ paused: Bool) {
        engine.webSocket.setReceivingPaused(paused)
    }

    /// Sends one packet and its attachments back to back.
    func send(_ packet: SocketIOPacket, attachments: [[UInt8]]) throws {
        var packets: [EngineIOPacket] = [.message(SocketIOCodec.encode(packet))]
        packets += attachments.map { EngineIOPacket.binary($0) }
        try engine.send(packets)
    }

    /// Leaves the namespace (DISCONNECT) and closes the connection.
    func close() {
        try? send(SocketIOPacket(type: .disconnect, namespace: namespace), attachments: [])
        engine.close()
    }
}

/// What the server sent before its CONNECT reply: kept, in order, up to `maxCount` packets and
/// `maxBytes` bytes; the rest is dropped and counted (a server cannot fill the client's memory
/// before the session even starts).
struct EarlyPackets {
    static let maxCount = 256
    static let maxBytes = 1 << 20

    private(set) var kept: [SocketIOSession.Incoming] = []
    private(set) var dropped = 0
    private var bytes = 0

    mutating func keep(_ incoming: SocketIOSession.Incoming, size: Int) {
        guard kept.count < Self.maxCount, bytes + size <= Self.maxBytes else {
            dropped += 1
            return
        }
        kept.append(incoming)
        bytes += size
    }
}

/// Decoding state of a connected session's incoming packets. Used only on the reactor thread
/// (push mode delivers messages one at a time), hence the unchecked Sendable.
private final class PacketReader: @unchecked Sendable {
    private var assembler: SocketIOBinaryAssembler
    /// Bytes of the packet being assembled (its text and attachments so far).
    private var packetBytes = 0
    private let namespace: String
    private let epoch: Int
    private let log: @Sendable (SocketIOLogLevel, String) -> Void

    init(namespace: String, epoch: Int, attachmentByteLimit: Int, log: @escaping @Sendable (SocketIOLogLevel, String) -> Void) {
        assembler = SocketIOBinaryAssembler(byteLimit: attachmentByteLimit)
        self.namespace = namespace
        self.epoch = epoch
        self.log = log
    }

    /// Handles one Engine.IO message; returns a reason to stop, or nil to go on.
    func handle(
        _ message: EngineIOMessage, onEvent: (SocketIOEvent, Int) -> Void, onAck: (Int, SocketIOPayload) -> Void
    ) -> SocketIOError? {
        let complete: (SocketIOPacket, [[UInt8]])?
        do {
            switch message {
            case .text(let bytes):
                packetBytes = bytes.count
                complete = try assembler.start(try SocketIOCodec.decode(bytes))
            case .binary(let data):
                packetBytes += data.count
                complete = try assembler.add(data)
            }
        } catch {
            return WebSocket.classify(error)
        }
        guard let (packet, attachments) = complete, packet.namespace == namespace else { return nil }
        let size = packetBytes
        switch packet.type {
        case .event, .binaryEvent, .ack, .binaryAck:
            switch SocketIOSession.makeIncoming(packet, attachments, epoch: epoch) {
            case .event(let event)?: onEvent(event, size)
            case .ack(let id, let payload)?: onAck(id, payload)
            case nil: log(.warning, "ignored a malformed \(packet.type) packet")
            }
        case .disconnect:
            return .disconnectedByServer
        case .connect:
            log(.debug, "ignored a repeated CONNECT packet")
        case .connectError:
            log(.warning, "ignored CONNECT_ERROR on a connected namespace: \(packet.data?.jsonText ?? "")")
        }
        return nil
    }
}
