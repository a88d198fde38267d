/// A complete HTTP response.
public struct HTTPResponse: Sendable, Equatable {
    /// The final status (interim 1xx responses are skipped).
    public var status: Int
    public var headers: HTTPHeaders
    /// The body without its transfer coding (chunks joined); empty for HEAD, 204 and 304.
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
