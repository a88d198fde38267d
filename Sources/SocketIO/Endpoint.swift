/// A parsed `ws`, `wss`, `http` or `https` URL: where to connect and what to request.
struct Endpoint: Sendable, Equatable {
    /// TLS is used (`wss` or `https`).
    var secure: Bool
    /// Host name or IP literal, without the brackets of an IPv6 literal.
    var host: String
    var port: Int
    /// The path, "/" when the URL has none.
    var path: String
    /// The raw query without its "?", nil when the URL has none.
    var query: String?

    init(secure: Bool, host: String, port: Int, path: String, query: String?) {
        self.secure = secure
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// Parses `url`; `userinfo@` and fragments are not accepted.
    init(parsing url: String) throws(SocketIOError) {
        guard let schemeEnd = url.firstRange(of: "://") else { throw .invalidURL(url) }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        switch scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw .invalidURL(url)
        }
        var rest = url[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let target = rest[authorityEnd...]
        guard !authority.isEmpty, !authority.contains("@") else { throw .invalidURL(url) }

        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(url) }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL(url) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw .invalidURL(url) }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw .invalidURL(url) }
            port = value
        } else {
            port = secure ? 443 : 80
        }
        if let q = target.firstIndex(of: "?") {
            let p = target[..<q]
            path = p.isEmpty ? "/" : String(p)
            query = String(target[target.index(after: q)...])
        } else {
            path = target.isEmpty ? "/" : String(target)
            query = nil
        }
    }

    /// The request target: path and query.
    var requestTarget: String {
        guard let query, !query.isEmpty else { return path }
        return path + "?" + query
    }

    /// The value of the HTTP `Host` header.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// The host is an IPv4 or IPv6 literal rather than a DNS name.
    var hostIsIPLiteral: Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                && (Int(part) ?? 256) <= 255
        }
    }
}

/// Percent-encoding for query components (RFC 3986 unreserved characters pass through).
enum QueryEncoding {
    static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `k=v&k=v` with both sides encoded, in the given order.
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }
}
