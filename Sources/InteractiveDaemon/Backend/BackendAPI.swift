import HTTP
import IPCProtocol
import JSONValue
import Network

/// Why a REST call gave no usable answer.
enum BackendCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection, a timeout, a broken HTTP exchange.
    case unreachable(String)
    /// HTTP 401 or 403.
    case refused(status: Int)
    /// HTTP 404.
    case notFound
    /// Another HTTP status that is not success (5xx, 400, …).
    case httpStatus(Int)
    /// A success reply that is not the JSON the call expects (an HTML page, another shape), or a
    /// reply over the call's size bound.
    case unexpected(String)
    /// The backend's refusal in its answer shape (`{"success":false,"code":…}`), whatever the
    /// HTTP status but 401 and 403: `code` is `api_<code>` in `answer.result`.
    case rejected(code: String?, status: Int)

    var description: String {
        switch self {
        case .unreachable(let detail): return "backend unreachable: \(detail)"
        case .refused(let status): return "backend refused the request (HTTP \(status))"
        case .notFound: return "not found on the backend (HTTP 404)"
        case .httpStatus(let status): return "the backend failed (HTTP \(status))"
        case .unexpected(let detail): return "unexpected backend reply: \(detail)"
        case .rejected(let code, let status): return "the backend refused: \(code ?? "no code") (HTTP \(status))"
        }
    }

    /// The local API error for a method that failed because of this.
    func rpcError(notFound: DaemonErrorName = .backendUnreachable) -> RPCError {
        switch self {
        case .unreachable: return .daemon(.backendUnreachable, description)
        case .refused: return .daemon(.backendRefused, description)
        case .notFound: return .daemon(notFound, description)
        case .httpStatus, .rejected: return .daemon(.backendUnreachable, description)
        case .unexpected: return .daemon(notFound == .scenarioUnavailable ? .scenarioUnavailable : .backendUnreachable, description)
        }
    }

    /// The `answer.result` reason and tracking failure step for an answer that failed because of this.
    var answerFailure: (reason: String, step: String) {
        switch self {
        case .unreachable: return ("network_error", "network")
        case .refused: return ("api_unauthorized", "api")
        case .rejected(let code, _): return (code.map { "api_\($0)" } ?? "api_false", "api")
        case .notFound, .httpStatus, .unexpected: return ("unknown_response", "api")
        }
    }
}

/// What `POST /api/actions` said.
enum ActionOutcome: Sendable, Equatable {
    case success(data: JSONValue)
    /// `reason` is `api_<code>`, `api_false`, `network_error`, `api_unauthorized` or `unknown_response`.
    case failure(reason: String, step: String)
}

/// The Interactive REST API (BACKEND.md, REST), for one tenant and viewer. Every reply is
/// bounded (`BackendReplies.maxReplyBytes`, the scenario by `scenarioMaxBytes`) and read part by
/// part, large ones off the event loop (`BackendReplies.read`).
struct BackendAPI: Sendable, Equatable {
    let requester: BackendRequester
    let apiURL: String
    /// The largest VOD scenario read (`scenarioMaxBytes`).
    let scenarioMaxBytes: Int

    init(settings: Settings, token: String?) throws(RPCError) {
        var missing: [String] = []
        if settings.apiURL == nil { missing.append("apiUrl") }
        if settings.tenant == nil { missing.append("tenant") }
        guard let apiURL = settings.apiURL, let tenant = settings.tenant else {
            throw RPCError.daemon(.notConfigured, "the backend is not configured", extra: ["missing": .array(missing.map(JSONValue.string))])
        }
        requester = BackendRequester(tenant: tenant, token: token, timeoutMs: settings.httpTimeoutMs, caFile: settings.caFile,
                                     insecureTLS: settings.insecureTLS)
        self.apiURL = apiURL.hasSuffix("/") ? String(apiURL.dropLast()) : apiURL
        scenarioMaxBytes = settings.scenarioMaxBytes
    }

    /// `POST /api/actions`. The reply is read in the answer shape whatever its HTTP status (a
    /// refusal keeps its code); only 401 and 403 mean the session.
    func postAction(_ body: JSONValue) async -> ActionOutcome {
        let response: HTTPResponse
        do {
            response = try await exchange("POST", "/api/actions", body: body)
        } catch {
            let failure = error.answerFailure
            return .failure(reason: failure.reason, step: failure.step)
        }
        guard let reply = await BackendReplies.read(response.body, AnswerReply.init) else {
            return .failure(reason: "unknown_response", step: "api")
        }
        if reply.success {
            guard (200..<300).contains(response.status) else { return .failure(reason: "unknown_response", step: "api") }
            return .success(data: reply.data)
        }
        return .failure(reason: reply.code.map { "api_\($0)" } ?? "api_false", step: "api")
    }

    /// `GET /api/public/vip-status?mediaId=…`. A refusal in the answer shape is `.rejected`
    /// whatever the HTTP status (but 401 and 403).
    func vipStatus(mediaId: String) async throws(BackendCallError) -> VIPStatus {
        let response = try await exchange("GET", "/api/public/vip-status?mediaId=\(URLText.queryValue(mediaId))")
        enum Read: Sendable { case status(VIPStatus), refusal(AnswerReply), other }
        let read = await BackendReplies.read(response.body) { document -> Read in
            if let refusal = AnswerReply.refusal(document) { return .refusal(refusal) }
            let root = document.root
            guard let vip = document.member("vip", of: root).map(document.value)?.lenientBool,
                  let bet = document.member("bet", of: root).map(document.value)?.lenientBool else { return .other }
            return .status(VIPStatus(vip: vip, bet: bet))
        }
        switch read {
        case .refusal(let refusal)?: throw .rejected(code: refusal.code, status: response.status)
        case .status(let status)? where (200..<300).contains(response.status): return status
        default:
            try Self.checkStatus(response.status)
            throw .unexpected(read == nil ? "not JSON" : "vip-status without vip and bet")
        }
    }

    /// `GET /api/interactive-status/{mediaId}`: what the contract says it holds (the answered
    /// timelines, bounded), as `interactive.status` returns it, and the answered timelines.
    func interactiveStatus(mediaId: String) async throws(BackendCallError) -> (reply: JSONValue, answered: [String]) {
        let response = try await exchange("GET", "/api/interactive-status/\(URLText.pathSegment(mediaId))")
        try Self.checkStatus(response.status)
        guard let status = await BackendReplies.read(response.body, InteractiveStatusReply.init) else {
            throw .unexpected("interactive-status without answered")
        }
        return (status.json, status.answered)
    }

    /// `GET /api/ctc/scenario/v2/vod/{mediaId}/{os}`, at most `scenarioMaxBytes`.
    func vodScenario(mediaId: String, os: String) async throws(BackendCallError) -> VODScenarioReply {
        let response = try await exchange("GET", "/api/ctc/scenario/v2/vod/\(URLText.pathSegment(mediaId))/\(URLText.pathSegment(os))",
                                          maxBytes: scenarioMaxBytes)
        try Self.checkStatus(response.status)
        guard let scenario = await BackendReplies.read(response.body, VODScenarioReply.init) else {
            throw .unexpected("not JSON with a timelines array")
        }
        return scenario
    }

    /// Sends the request; the response whatever its status but 401 and 403 (`refused`).
    private func exchange(_ method: String, _ path: String, body: JSONValue? = nil,
                          maxBytes: Int = BackendReplies.maxReplyBytes) async throws(BackendCallError) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await requester.send(method, apiURL + path, body: body, maxBodyBytes: maxBytes)
        } catch .responseTooLarge(let detail) {
            throw .unexpected("reply too large: \(detail)")
        } catch {
            throw .unreachable(error.description)
        }
        if response.status == 401 || response.status == 403 { throw .refused(status: response.status) }
        return response
    }

    /// Throws for a status that is not success (404: `notFound`).
    private static func checkStatus(_ status: Int) throws(BackendCallError) {
        switch status {
        case 200..<300: return
        case 401, 403: throw .refused(status: status)
        case 404: throw .notFound
        default: throw .httpStatus(status)
        }
    }
}

/// URLs the daemon builds: parts encoded (`PercentEncoding`), and parameters added to a query.
enum URLText {
    static func pathSegment(_ text: String) -> String { PercentEncoding.encode(text) }
    static func queryValue(_ text: String) -> String { PercentEncoding.encode(text) }

    /// `url` with `parameters` added to its query (before any fragment).
    static func appendingQuery(_ url: String, _ parameters: [(String, String)]) -> String {
        guard !parameters.isEmpty else { return url }
        var url = url
        return url.withUTF8 { bytes in
            let fragmentStart = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
            let base = UnsafeBufferPointer(rebasing: bytes[..<fragmentStart])
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 64)
            out.append(contentsOf: base)
            if !base.contains(UInt8(ascii: "?")) {
                out.append(UInt8(ascii: "?"))
            } else if let last = base.last, last != UInt8(ascii: "?"), last != UInt8(ascii: "&") {
                out.append(UInt8(ascii: "&"))
            }
            PercentEncoding.appendQuery(parameters, to: &out)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[fragmentStart...]))
            return String(decoding: out, as: UTF8.self)
        }
    }
}
