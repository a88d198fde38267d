/// One HTTP/1.1 request: what the client sends.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: HTTPURL
    /// Fields besides `Host` and `Content-Length`, which the encoding adds.
    public var headers: HTTPHeaders
    /// Sent with a `Content-Length`; nil sends no body.
    public var body: [UInt8]?

    public init(method: String, url: HTTPURL, headers: HTTPHeaders = [:], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Whether sending the request twice has the effect of sending it once (RFC 9110 §9.2.2):
    /// only such a request is sent again by the client on its own.
    public var isIdempotent: Bool {
        ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method)
    }

    /// Fields the encoding owns: a caller's copy would contradict the framing.
    private static let reservedNames = ["host", "content-length", "transfer-encoding", "connection"]

    /// The bytes on the wire. A header is never dropped or sent with a control character in it
    /// (a line break could add a header): such a request is refused.
    public func encoded() throws(HTTPError) -> [UInt8] {
        guard HTTPSyntax.isToken(method) else { throw .invalidRequest("the method is not a token") }
        var head = "\(method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\n"
        for field in headers {
            guard HTTPSyntax.isToken(field.name) else { throw .invalidRequest("a header name is not a token") }
            guard !Self.reservedNames.contains(field.name.lowercased()) else {
                throw .invalidRequest("the \(field.name) header is set by the client")
            }
            guard !field.value.unicodeScalars.contains(where: { HTTPSyntax.isControl($0) }) else {
                throw .invalidRequest("the \(field.name) header holds a control character")
            }
            head += "\(field.name): \(field.value)\r\n"
        }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let body { bytes += body }
        return bytes
    }
}
