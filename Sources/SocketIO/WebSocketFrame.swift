/// WebSocket opcodes (RFC 6455 §5.2).
enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One frame as read off the wire (payload already unmasked).
struct WebSocketFrame: Sendable, Equatable {
    var fin: Bool
    var opcode: WebSocketOpcode
    var payload: [UInt8]
}

/// A violation of RFC 6455 by the peer, with the close code to answer it with.
struct WebSocketProtocolError: Error, Sendable, Equatable {
    /// 1002 protocol error, 1007 invalid payload data, 1009 message too big.
    var code: UInt16
    var message: String
}

/// Close codes a peer may put in a close frame (RFC 6455 §7.4).
enum WebSocketCloseCode {
    static func isValidReceived(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011: return true
        case 3000...4999: return true
        default: return false
        }
    }
}

/// Incremental frame decoder for frames sent by a server (which must not be masked).
struct WebSocketFrameDecoder {
    /// Largest payload accepted for one frame; larger frames fail with 1009.
    let maxPayload: Int
    private var buffer: [UInt8] = []
    private var offset = 0

    init(maxPayload: Int) {
        self.maxPayload = maxPayload
    }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if offset > 0 && offset == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            offset = 0
        } else if offset > 65_536 && offset * 2 > buffer.count {
            buffer.removeSubrange(0..<offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    mutating func next() throws(WebSocketProtocolError) -> WebSocketFrame? {
        guard let header = try nextHeader() else { return nil }
        let total = header.length + Int(header.payloadLength)
        guard buffer.count - offset >= total else { return nil }
        let payload = Array(buffer[(offset + header.length)..<(offset + total)])
        offset += total
        return WebSocketFrame(fin: header.fin, opcode: header.opcode, payload: payload)
    }

    /// The opcode and the payload bytes buffered so far of the frame that is still incomplete,
    /// or nil when not even its header is complete (or it is invalid: `next()` throws then).
    /// Lets a text message be checked before its last byte arrives.
    func incompleteFramePrefix() -> (opcode: WebSocketOpcode, payload: ArraySlice<UInt8>)? {
        guard let header = try? nextHeader() else { return nil }
        let start = offset + header.length
        let end = min(buffer.count, start + Int(header.payloadLength))
        return (header.opcode, buffer[start..<end])
    }

    private struct Header {
        var fin: Bool
        var opcode: WebSocketOpcode
        /// Bytes of the header itself.
        var length: Int
        /// At most `maxPayload`.
        var payloadLength: UInt64
    }

    /// The header of the next frame, or nil when more bytes are needed.
    private func nextHeader() throws(WebSocketProtocolError) -> Header? {
        let available = buffer.count - offset
        guard available >= 2 else { return nil }
        let first = buffer[offset]
        let second = buffer[offset + 1]
        guard first & 0x70 == 0 else {
            throw WebSocketProtocolError(code: 1002, message: "reserved bits set without a negotiated extension")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketProtocolError(code: 1002, message: "unknown opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        guard second & 0x80 == 0 else {
            throw WebSocketProtocolError(code: 1002, message: "masked frame from the server")
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[offset + 2]) << 8 | UInt64(buffer[offset + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for i in 0..<8 { length = length << 8 | UInt64(buffer[offset + 2 + i]) }
            guard length & (1 << 63) == 0 else {
                throw WebSocketProtocolError(code: 1002, message: "64-bit length with the high bit set")
            }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw WebSocketProtocolError(code: 1002, message: "fragmented control frame") }
            guard length <= 125 else { throw WebSocketProtocolError(code: 1002, message: "control frame longer than 125 bytes") }
        }
        guard length <= UInt64(maxPayload) else {
            throw WebSocketProtocolError(code: 1009, message: "frame of \(length) bytes exceeds the limit of \(maxPayload)")
        }
        return Header(fin: fin, opcode: opcode, length: headerLength, payloadLength: length)
    }
}

/// Frame encoder for frames sent by a client (always masked).
enum WebSocketFrameEncoder {
    /// Appends one frame to `out`, masked with `mask`.
    static func encode(opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true, mask: UInt32, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let count = payload.count
        if count < 126 {
            out.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        let maskBytes: [UInt8] = [UInt8(mask >> 24), UInt8(mask >> 16 & 0xFF), UInt8(mask >> 8 & 0xFF), UInt8(mask & 0xFF)]
        out.append(contentsOf: maskBytes)
        let start = out.count
        out.append(contentsOf: payload)
        applyMask(maskBytes, to: &out, from: start)
    }

    /// XORs `out[from...]` with the 4-byte mask, eight bytes at a time where possible.
    static func applyMask(_ mask: [UInt8], to out: inout [UInt8], from start: Int) {
        out.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            let count = raw.count - start
            let bytes = base + start
            var wide: UInt64 = 0
            withUnsafeMutableBytes(of: &wide) { w in
                for i in 0..<8 { w[i] = mask[i & 3] }
            }
            var i = 0
            while i + 8 <= count {
                let word = (bytes + i).loadUnaligned(as: UInt64.self) ^ wide
                (bytes + i).storeBytes(of: word, as: UInt64.self)
                i += 8
            }
            while i < count {
                bytes.storeBytes(of: bytes.load(fromByteOffset: i, as: UInt8.self) ^ mask[i & 3], toByteOffset: i, as: UInt8.self)
                i += 1
            }
        }
    }
}
