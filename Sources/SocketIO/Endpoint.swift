import Network

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
        guard let parts = try? URLParts(parsing: url) else { throw .invalidURL(url) }
        switch parts.scheme {
        case "ws", "http": secure = false
        case "wss", "https": secure = true
        default: throw .invalidURL(url)
        }
        host = parts.host
        port = parts.port ?? (secure ? 443 : 80)
        if let q = parts.target.firstIndex(of: "?") {
            let p = parts.target[..<q]
            path = p.isEmpty ? "/" : String(p)
            query = String(parts.target[parts.target.index(after: q)...])
        } else {
            path = parts.target.isEmpty ? "/" : String(parts.target)
            query = nil
        }
    }

    /// The request target: path and query.
    var requestTarget: String {
        guard let query, !query.isEmpty else { return path }
        return path + "?" + query
    }

    /// The value of the HTTP `Host` header.
    var hostHeader: String { URLParts.hostHeader(host: host, port: port, defaultPort: secure ? 443 : 80) }

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
