/// Why an HTTP request got no complete response.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute `http` or `https` URL this client can request.
    case invalidURL(String)
    /// The request cannot be sent as asked (a header holding a control character, a bad method).
    case invalidRequest(String)
    /// No connection to the origin (refused, unreachable, DNS, TLS handshake).
    case connectFailed(String)
    /// The connect or the whole request overran its timeout.
    case timedOut(String)
    /// The peer closed or reset the connection before the response was complete.
    case connectionClosed(String)
    /// The response breaks HTTP/1.1 (status line, headers, framing).
    case malformedResponse(String)
    /// The response head or body is larger than the request allows.
    case responseTooLarge(String)
    /// The task that made the request was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .invalidURL(let detail): return "invalid URL: \(detail)"
        case .invalidRequest(let detail): return "request not sent: \(detail)"
        case .connectFailed(let detail): return "cannot connect: \(detail)"
        case .timedOut(let detail): return "timed out: \(detail)"
        case .connectionClosed(let detail): return "connection closed: \(detail)"
        case .malformedResponse(let detail): return "malformed response: \(detail)"
        case .responseTooLarge(let detail): return "response too large: \(detail)"
        case .cancelled: return "cancelled"
        }
    }
}
