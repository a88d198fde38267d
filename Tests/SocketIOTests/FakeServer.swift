import JSONValue
@testable import SocketIO

/// The server's side of the wire, for driving the protocol machines without a network: frames as
/// a server sends them (unmasked), the upgrade answer, and the client's frames unmasked.
enum FakeServer {
    /// One server frame; `first` is the FIN bit, reserved bits and opcode.
    static func frame(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [first]
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        return out + payload
    }

    static func text(_ text: String) -> [UInt8] { frame(0x81, Array(text.utf8)) }
    static func binary(_ bytes: [UInt8]) -> [UInt8] { frame(0x82, bytes) }
    static func close(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        frame(0x88, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// The 101 answer to the client's upgrade `request`.
    static func accept(_ request: [UInt8]) -> [UInt8] {
        let key = header("Sec-WebSocket-Key", in: request) ?? ""
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(Encoding.webSocketAccept(for: key))\r\n\r\n"
        return Array(response.utf8)
    }

    /// The value of `name` in an HTTP request or response.
    static func header(_ name: String, in bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\r\n") where line.lowercased().hasPrefix(name.lowercased() + ":") {
            return String(line.dropFirst(name.count + 1)).trimmingSpaces()
        }
        return nil
    }

    /// The client's frames in `bytes`, unmasked; every client frame must be masked.
    static func clientFrames(_ bytes: [UInt8]) -> [WebSocketFrame] {
        var frames: [WebSocketFrame] = []
        var index = 0
        while index + 2 <= bytes.count {
            let first = bytes[index]
            let second = bytes[index + 1]
            guard second & 0x80 != 0, let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { return frames + [WebSocketFrame(fin: false, opcode: .close, payload: [])] }
            var length = Int(second & 0x7F)
            index += 2
            if length == 126 {
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            } else if length == 127 {
                length = 0
                for i in 0..<8 { length = length << 8 | Int(bytes[index + i]) }
                index += 8
            }
            let mask = Array(bytes[index..<(index + 4)])
            index += 4
            let payload = bytes[index..<(index + length)].enumerated().map { $0.element ^ mask[$0.offset & 3] }
            index += length
            frames.append(WebSocketFrame(fin: first & 0x80 != 0, opcode: opcode, payload: payload))
        }
        return frames
    }

    /// The text of the client's text frames in `bytes`.
    static func clientTexts(_ bytes: [UInt8]) -> [String] {
        clientFrames(bytes).filter { $0.opcode == .text }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

extension Array where Element == WebSocketMachine.Action {
    /// Everything the actions write, concatenated.
    var written: [UInt8] {
        flatMap { action -> [UInt8] in
            if case .write(let bytes) = action { return bytes }
            return []
        }
    }
}

extension Array where Element == SocketIOConnectionMachine.Action {
    var written: [UInt8] {
        flatMap { action -> [UInt8] in
            if case .write(let bytes) = action { return bytes }
            return []
        }
    }
}

extension Array where Element == SocketIOClientMachine.Action {
    var written: [UInt8] {
        flatMap { action -> [UInt8] in
            if case .write(let bytes) = action { return bytes }
            return []
        }
    }

    /// The states the actions publish, in order.
    var published: [SocketIOConnectionState] {
        compactMap { action in
            if case .publish(let state) = action { return state }
            return nil
        }
    }

    /// The ids of the acks the actions fail, in order.
    var failedAcks: [Int] {
        compactMap { action in
            if case .failAck(let id, _) = action { return id }
            return nil
        }
    }

    /// The proofs of carriage the actions tell, in order.
    var carried: [SocketIOWriteMark] {
        compactMap { action in
            if case .carried(let mark) = action { return mark }
            return nil
        }
    }
}

extension SocketIOClientMachine {
    /// `emitWithAck` with the next id.
    mutating func emitWithAck(
        _ event: String, _ args: [JSONValue], attachments: [[UInt8]], timeout: Duration, policy: EmitPolicy, now: ContinuousClock.Instant
    ) throws(SocketIOError) -> (id: Int, actions: [Action]) {
        let id = reserveAckId()
        return (id, try emitWithAck(id: id, event, .values(args), attachments: attachments, timeout: timeout, policy: policy, now: now))
    }
}
