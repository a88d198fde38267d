import HTTP
import JSONValue

/// Where and as whom play requests go: taken from the settings and the session at send time.
struct PlaybackEndpoint: Sendable, Equatable {
    /// Origin of the playback API (`playbackUrl`, else `apiUrl`), without a trailing slash.
    let origin: String
    let tenant: String
    /// The viewer's session token. Secret: never logged.
    let token: String
    let timeoutMs: Int
    let caFile: String?
    let insecureTLS: Bool

    /// Nil when the settings lack the playback origin or the tenant.
    init?(settings: Settings, token: String) {
        guard let origin = settings.playbackURL, let tenant = settings.tenant else { return nil }
        self.origin = origin.hasSuffix("/") ? String(origin.dropLast()) : origin
        self.tenant = tenant
        self.token = token
        timeoutMs = settings.playbackTimeoutMs
        caFile = settings.caFile
        insecureTLS = settings.insecureTLS
    }
}

/// Asks the viewer's backend for play tickets. The manager goes through this so that its tests
/// can answer in its place.
protocol PlayTicketService: Sendable {
    func fetchTickets(_ request: PlayRequest, from endpoint: PlaybackEndpoint) async -> PlayFetchResult
}

/// `POST {playbackUrl}/v1/play` over the daemon's HTTP client, with the backend's headers
/// (BACKEND.md, Playback tickets). A cancelled task (a superseded request) ends at once.
struct RESTPlayTicketService: PlayTicketService {
    func fetchTickets(_ request: PlayRequest, from endpoint: PlaybackEndpoint) async -> PlayFetchResult {
        let requester = BackendRequester(tenant: endpoint.tenant, token: endpoint.token, timeoutMs: endpoint.timeoutMs,
                                         caFile: endpoint.caFile, insecureTLS: endpoint.insecureTLS)
        let body: JSONValue = [
            "film_id": .string(request.episode.filmId), "episode_no": JSONValue(request.episode.episodeNo),
            "union_info": .string(request.device.unionInfo), "drm_kek": .string(request.device.drmKek),
        ]
        let response: HTTPResponse
        do {
            response = try await requester.send("POST", endpoint.origin + "/v1/play", body: body, maxBodyBytes: BackendReplies.maxReplyBytes)
        } catch {
            if case .timedOut = error { return .timedOut }
            return .networkFailure
        }
        // 401 and 403 are the session's (IPC.md, session expiry); any other reply is read
        // whatever its HTTP status: a refusal is `{"ok":false,"outcome":…}`.
        if response.status == 401 || response.status == 403 { return .sessionRefused }
        let nowMs = Timestamp.nowMs()
        guard let reply = await BackendReplies.read(response.body, { PlayReply($0, nowMs: nowMs) }) else { return .undecodable }
        return .reply(reply)
    }
}
