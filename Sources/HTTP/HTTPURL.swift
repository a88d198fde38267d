import Network

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
        let parts: URLParts
        do {
            parts = try URLParts(parsing: text)
        } catch {
            throw .invalidURL(error.description)
        }
        switch parts.scheme {
        case "http": secure = false
        case "https": secure = true
        default: throw .invalidURL("not http or https")
        }
        guard !text.unicodeScalars.contains(where: { HTTPSyntax.isControl($0) || $0 == " " }) else {
            throw .invalidURL("holds a space or a control character")
        }
        host = parts.host
        port = parts.port ?? (secure ? 443 : 80)
        target = parts.target.hasPrefix("/") ? String(parts.target) : "/" + parts.target
    }

    /// The value of the `Host` header.
    public var hostHeader: String { URLParts.hostHeader(host: host, port: port, defaultPort: secure ? 443 : 80) }

    /// Where a kept-alive connection can be reused: scheme, host and port.
    public var origin: HTTPOrigin { HTTPOrigin(secure: secure, host: host, port: port) }
}

/// Scheme, host and port: the key of the connection pool.
public struct HTTPOrigin: Sendable, Hashable {
    public var secure: Bool
    public var host: String
    public var port: Int
}
