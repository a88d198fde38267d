/// The HTTP/1.1 upgrade handshake (RFC 6455 §4).
enum Handshake {
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

    static func parseResponse(_ bytes: [UInt8]) throws(SocketIOError) -> Response {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.first else { throw .handshakeFailed(status: 0, message: "empty response") }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw .handshakeFailed(status: 0, message: "malformed status line: \(statusLine.prefix(100))")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw .handshakeFailed(status: status, message: "malformed header line")
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

    static func validate(_ response: Response, key: String) throws(SocketIOError) {
        guard response.headers["upgrade"]?.lowercased() == "websocket" else {
            throw .handshakeFailed(status: 101, message: "missing Upgrade: websocket")
        }
        let connection = response.headers["connection"]?.lowercased().split(separator: ",").map { $0.trimmingSpaces() } ?? []
        guard connection.contains("upgrade") else {
            throw .handshakeFailed(status: 101, message: "missing Connection: Upgrade")
        }
        guard response.headers["sec-websocket-accept"] == Encoding.webSocketAccept(for: key) else {
            throw .handshakeFailed(status: 101, message: "wrong Sec-WebSocket-Accept")
        }
        if let extensions = response.headers["sec-websocket-extensions"], !extensions.isEmpty {
            throw .handshakeFailed(status: 101, message: "the server chose extensions that were not offered: \(extensions)")
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
