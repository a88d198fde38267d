import HTTP
import IPCProtocol
import JSONValue
import Network

/// Why a REST call gave no usable answer.
enum BackendCallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection or a timeout.
    case unreachable(String)
    /// HTTP 401 or 403.
    case refused(status: Int)
    /// HTTP 404.
    case notFound
    /// Another HTTP status that is not success (5xx, 400, …).
    case httpStatus(Int)
    /// A success reply that is not the JSON the call expects (an HTML page, another shape).
    case unexpected(String)

    var description: String {
        switch self {
        case .unreachable(let detail): return "backend unreachable: \(detail)"
        case .refused(let status): return "backend refused the request (HTTP \(status))"
        case .notFound: return "not found on the backend (HTTP 404)"
        case .httpStatus(let status): return "the backend failed (HTTP \(status))"
        case .unexpected(let detail): return "unexpected backend reply: \(detail)"
        }
    }

    /// The local API error for a method that failed because of this.
    func rpcError(notFound: DaemonErrorName = .backendUnreachable) -> RPCError {
        switch self {
        case .unreachable: return .daemon(.backendUnreachable, description)
        case .refused: return .daemon(.backendRefused, description)
        case .notFound: return .daemon(notFound, description)
        case .httpStatus: return .daemon(.backendUnreachable, description)
        case .unexpected: return .daemon(notFound == .scenarioUnavailable ? .scenarioUnavailable : .backendUnreachable, description)
        }
    }

    /// The `answer.result` reason and tracking failure step for an answer that failed because of this.
    var answerFailure: (reason: String, step: String) {
        switch self {
        case .unreachable: return ("network_error", "network")
        case .refused: return ("api_unauthorized", "api")
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

/// The Interactive REST API (BACKEND.md, REST), for one tenant and viewer.
struct BackendAPI: Sendable, Equatable {
    let requester: BackendRequester
    let apiURL: String

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
    }

    /// `POST /api/actions`.
    func postAction(_ body: JSONValue) async -> ActionOutcome {
        let reply: JSONValue
        do {
            reply = try await call("POST", "/api/actions", body: body)
        } catch {
            let failure = error.answerFailure
            return .failure(reason: failure.reason, step: failure.step)
        }
        guard let success = reply["success"]?.boolValue else { return .failure(reason: "unknown_response", step: "api") }
        if success { return .success(data: reply["data"] ?? .null) }
        if let code = reply["code"]?.idString { return .failure(reason: "api_\(PeerText.clipped(code, limit: 64))", step: "api") }
        return .failure(reason: "api_false", step: "api")
    }

    /// `GET /api/public/vip-status?mediaId=…`.
    func vipStatus(mediaId: String) async throws(BackendCallError) -> VIPStatus {
        let reply = try await call("GET", "/api/public/vip-status?mediaId=\(URLText.queryValue(mediaId))")
        guard let vip = reply["vip"]?.lenientBool, let bet = reply["bet"]?.lenientBool else {
            throw .unexpected("vip-status without vip and bet")
        }
        return VIPStatus(vip: vip, bet: bet)
    }

    /// `GET /api/interactive-status/{mediaId}`: the whole reply, and the answered timelines.
    func interactiveStatus(mediaId: String) async throws(BackendCallError) -> (reply: JSONValue, answered: [String]) {
        let reply = try await call("GET", "/api/interactive-status/\(URLText.pathSegment(mediaId))")
        guard let answered = reply["answered"]?.arrayValue else { throw .unexpected("interactive-status without answered") }
        return (reply, answered.compactMap(\.idString))
    }

    /// `GET /api/ctc/scenario/v2/vod/{mediaId}/{os}`.
    func vodScenario(mediaId: String, os: String) async throws(BackendCallError) -> JSONValue {
        try await call("GET", "/api/ctc/scenario/v2/vod/\(URLText.pathSegment(mediaId))/\(URLText.pathSegment(os))")
    }

    private func call(_ method: String, _ path: String, body: JSONValue? = nil) async throws(BackendCallError) -> JSONValue {
        let response: HTTPResponse
        do {
            response = try await requester.send(method, apiURL + path, body: body)
        } catch {
            throw .unreachable(error.description)
        }
        switch response.status {
        case 200..<300: break
        case 401, 403: throw .refused(status: response.status)
        case 404: throw .notFound
        default: throw .httpStatus(response.status)
        }
        do {
            return try JSONValue.parse(response.body)
        } catch {
            throw .unexpected("not JSON (\(error.reason))")
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
        let bytes = Array(url.utf8)
        let fragmentStart = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let base = bytes[..<fragmentStart]
        var out = Array(base)
        if !base.contains(UInt8(ascii: "?")) {
            out.append(UInt8(ascii: "?"))
        } else if let last = base.last, last != UInt8(ascii: "?"), last != UInt8(ascii: "&") {
            out.append(UInt8(ascii: "&"))
        }
        PercentEncoding.appendQuery(parameters, to: &out)
        out += bytes[fragmentStart...]
        return String(decoding: out, as: UTF8.self)
    }
}
