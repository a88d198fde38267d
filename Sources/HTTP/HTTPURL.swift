/// An absolute `http` or `https` URL, split into where to connect and what to request.
public struct HTTPURL: Sendable, Equatable {
    /// TLS is used (`https`).
    public var secure: Bool
    /// Host name or IP literal, without the brackets of an IPv6 literal.
    public var host: String
    public var port: Int
    /// The request target: path (at least "/") and query.
    public var target: String

    /// Parses `text`; `userinfo@` is refused, a fragment is dropped, and so is any space or
    /// control character (they would break the request line).
    public init(parsing text: String) throws(HTTPError) {
        guard let schemeEnd = text.firstRange(of: "://") else { throw .invalidURL("no scheme") }
        switch text[..<schemeEnd.lowerBound].lowercased() {
        case "http": secure = false
        case "https": secure = true
        default: throw .invalidURL("not http or https")
        }
        guard !text.unicodeScalars.contains(where: { HTTPSyntax.isControl($0) || $0 == " " }) else {
            throw .invalidURL("holds a space or a control character")
        }
        var rest = text[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { throw .invalidURL("user information is not supported") }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL("unclosed IPv6 literal") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalidURL("bad port") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw .invalidURL("no host") }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw .invalidURL("bad port") }
            port = value
        } else {
            port = secure ? 443 : 80
        }
        let path = rest[authorityEnd...]
        target = path.hasPrefix("/") ? String(path) : "/" + path
    }

    /// The value of the `Host` header.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Where a kept-alive connection can be reused: scheme, host and port.
    public var origin: HTTPOrigin { HTTPOrigin(secure: secure, host: host, port: port) }
}

/// Scheme, host and port: the key of the connection pool.
public struct HTTPOrigin: Sendable, Hashable {
    public var secure: Bool
    public var host: String
    public var port: Int
}
