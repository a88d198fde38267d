import JSONValue

/// Socket.IO packet types (protocol 5; protocol 4 uses the same numbers, with 4 = ERROR).
enum SocketIOPacketType: UInt8, Sendable {
    case connect = 0
    case disconnect = 1
    case event = 2
    case ack = 3
    case connectError = 4
    case binaryEvent = 5
    case binaryAck = 6

    var isBinary: Bool { self == .binaryEvent || self == .binaryAck }
}

/// One Socket.IO packet: `<type>[<attachments>-][<namespace>,][<ack id>][<JSON data>]`.
struct SocketIOPacket: Sendable, Equatable {
    var type: SocketIOPacketType
    var namespace: String = "/"
    var id: Int?
    var data: JSONValue?
    /// The data as JSON text already, for an outgoing packet whose caller encoded it once (then
    /// `data` is nil).
    var encodedData: [UInt8]?
    /// Number of binary attachments that follow (binary types only).
    var attachmentCount = 0
    /// Where an incoming EVENT's data array lies in the packet, part by part; nil for other packets.
    var dataText: SocketIODataText?
}

/// An incoming packet's data text and where the parts of its array lie in it.
struct SocketIODataText: Sendable, Equatable {
    let bytes: ArraySlice<UInt8>
    let ranges: JSONElementRanges

    /// The text of element `index` (of its member `member`, when given); nil when absent.
    func element(_ index: Int, member: String? = nil) -> ArraySlice<UInt8>? {
        guard ranges.elements.indices.contains(index) else { return nil }
        let range: Range<Int>
        if let member {
            guard let found = ranges.member(member, ofElement: index) else { return nil }
            range = found
        } else {
            range = ranges.elements[index]
        }
        let start = bytes.startIndex
        return bytes[(start + range.lowerBound)..<(start + range.upperBound)]
    }
}

/// An outgoing event's arguments: values, or one argument as JSON text its caller encoded once.
enum SocketIOEventArguments: Sendable {
    case values([JSONValue])
    /// One valid JSON value's text.
    case encoded([UInt8])
}

/// Text encoding of Socket.IO packets, shared by protocols 4 and 5.
enum SocketIOCodec {
    static let maxAttachments = 1_000

    static func encode(_ packet: SocketIOPacket) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "0") + packet.type.rawValue]
        if packet.type.isBinary {
            out.append(contentsOf: String(packet.attachmentCount).utf8)
            out.append(UInt8(ascii: "-"))
        }
        if packet.namespace != "/" && !packet.namespace.isEmpty {
            out.append(contentsOf: packet.namespace.utf8)
            out.append(UInt8(ascii: ","))
        }
        if let id = packet.id { out.append(contentsOf: String(id).utf8) }
        if let encoded = packet.encodedData { out.append(contentsOf: encoded) } else { packet.data?.write(to: &out) }
        return out
    }

    static func decode(_ bytes: [UInt8]) throws(SocketIOError) -> SocketIOPacket {
        guard let first = bytes.first, first >= UInt8(ascii: "0"),
              let type = SocketIOPacketType(rawValue: first - UInt8(ascii: "0")) else {
            throw .protocolViolation("unknown Socket.IO packet type in \(preview(bytes))")
        }
        var packet = SocketIOPacket(type: type)
        var index = 1
        if type.isBinary {
            let start = index
            while index < bytes.count, isDigit(bytes[index]), index - start < 6 { index += 1 }
            guard index > start, index < bytes.count, bytes[index] == UInt8(ascii: "-"),
                  let count = Int(String(decoding: bytes[start..<index], as: UTF8.self)) else {
                throw .protocolViolation("binary packet without an attachment count: \(preview(bytes))")
            }
            guard count <= maxAttachments else {
                throw .protocolViolation("binary packet announces \(count) attachments (limit \(maxAttachments))")
            }
            packet.attachmentCount = count
            index += 1
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
            var namespace = String(decoding: bytes[start..<index], as: UTF8.self)
            if let query = namespace.firstIndex(of: "?") { namespace = String(namespace[..<query]) }
            packet.namespace = namespace
            if index < bytes.count { index += 1 }  // the comma
        }
        if index < bytes.count, isDigit(bytes[index]) {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index - start <= 15, let id = Int(String(decoding: bytes[start..<index], as: UTF8.self)) else {
                throw .protocolViolation("ack id too long in \(preview(bytes))")
            }
            packet.id = id
        }
        if index < bytes.count {
            do {
                if type == .event {
                    let parsed = try JSONValue.parseWithElementRanges(bytes[index...])
                    packet.data = parsed.value
                    packet.dataText = SocketIODataText(bytes: bytes[index...], ranges: parsed.ranges)
                } else {
                    packet.data = try JSONValue.parse(bytes[index...])
                }
            } catch {
                throw .protocolViolation("Socket.IO packet data: \(error)")
            }
        }
        switch type {
        case .event, .binaryEvent:
            guard let array = packet.data?.arrayValue, array.first?.stringValue != nil else {
                throw .protocolViolation("event packet without an event name: \(preview(bytes))")
            }
        case .ack, .binaryAck:
            guard packet.data?.arrayValue != nil, packet.id != nil else {
                throw .protocolViolation("ack packet without an id or arguments: \(preview(bytes))")
            }
        case .connect, .disconnect, .connectError:
            break
        }
        return packet
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static func preview(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(60), as: UTF8.self)
    }
}

/// Collects the binary attachments announced by a BINARY_EVENT or BINARY_ACK packet, at most
/// `byteLimit` bytes of them per packet (a server announcing 1,000 attachments cannot make the
/// client hold gigabytes).
struct SocketIOBinaryAssembler {
    private var pending: SocketIOPacket?
    private var attachments: [[UInt8]] = []
    private var attachmentBytes = 0
    let byteLimit: Int

    init(byteLimit: Int = 16 << 20) {
        self.byteLimit = byteLimit
    }

    /// Starts a packet; returns it at once when it needs no attachment.
    mutating func start(_ packet: SocketIOPacket) throws(SocketIOError) -> (SocketIOPacket, [[UInt8]])? {
        guard pending == nil else {
            throw .protocolViolation("a packet arrived while \(attachments.count) of \(pending?.attachmentCount ?? 0) attachments were still expected")
        }
        guard packet.type.isBinary, packet.attachmentCount > 0 else { return (packet, []) }
        pending = packet
        attachments = []
        attachmentBytes = 0
        return nil
    }

    /// Adds one attachment; returns the packet once all of them arrived.
    mutating func add(_ data: [UInt8]) throws(SocketIOError) -> (SocketIOPacket, [[UInt8]])? {
        guard let packet = pending else { throw .protocolViolation("binary message without a binary packet") }
        attachmentBytes += data.count
        guard attachmentBytes <= byteLimit else { throw .payloadTooLarge(size: attachmentBytes, limit: byteLimit) }
        attachments.append(data)
        guard attachments.count == packet.attachmentCount else { return nil }
        let complete = (packet, attachments)
        pending = nil
        attachments = []
        attachmentBytes = 0
        return complete
    }
}
