import HTTP
import JSONValue
import Network

/// Sends requests to the viewer's Interactive backend (REST and play requests) with the headers
/// every call carries, built here only: the tenant, JSON, and the viewer's bearer token.
struct BackendRequester: Sendable, Equatable {
    let tenant: String
    /// The viewer's bearer token, if logged in. Secret: never logged.
    let token: String?
    let timeoutMs: Int
    let tls: TLSOptions

    init(tenant: String, token: String?, timeoutMs: Int, caFile: String?, insecureTLS: Bool) {
        self.tenant = tenant
        self.token = token
        self.timeoutMs = timeoutMs
        tls = TLSOptions(caFile: caFile, insecure: insecureTLS)
    }

    /// Sends `method url` with `body` as JSON, on the daemon's HTTP client; the response is
    /// returned whatever its status. Throws when no complete response arrived in `timeoutMs`, or
    /// when the reply is larger than `maxBodyBytes` (refused as soon as that shows).
    func send(_ method: String, _ url: String, body: JSONValue? = nil, maxBodyBytes: Int) async throws(HTTPError) -> HTTPResponse {
        var headers: HTTPHeaders = ["X-TENANT-ID": tenant, "Accept": "application/json"]
        if let token { headers.add("Authorization", "Bearer \(token)") }
        if body != nil { headers.add("Content-Type", "application/json") }
        let request = HTTPRequest(method: method, url: try HTTPURL(parsing: url), headers: headers, body: body?.serialized())
        return try await HTTPClient.shared.send(request, tls: tls, timeout: .milliseconds(timeoutMs), maxBodyBytes: maxBodyBytes)
    }
}
