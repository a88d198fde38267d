import IPCProtocol
import JSONValue
import Runtime

/// The playback actor: a thin shell around `PlaybackCore` that feeds it the methods, the
/// session and the results of play requests, and performs what it decides (events, requests,
/// replies, logs). Control role only; see IPC.md, Playback tickets. As a service it cancels the
/// play requests still in flight when the daemon stops.
@LoopActor
final class PlaybackManager {

    private var core: PlaybackCore
    private let bus: EventBus
    private let log: Logger
    private let service: any PlayTicketService
    private let settings: @LoopActor () -> Settings
    private let clock: @Sendable () -> Int64
    /// The viewer's session token. Secret: never logged.
    private var token: String?
    /// Play requests in flight, by request id: cancelled once the core no longer awaits them.
    private var requests: [Int: Task<Void, Never>] = [:]
    /// Told when the backend refuses the viewer's token on a play request (the session's owner).
    private var sessionRefused: ((_ token: String, _ source: String) -> Void)?

    /// `settings` is read at every request (so `config.set` applies to the next one); `clock`
    /// is the wall clock in milliseconds that tickets expire by.
    init(bus: EventBus, log: Logger, service: any PlayTicketService = RESTPlayTicketService(),
         settings: @escaping @LoopActor () -> Settings, clock: @escaping @Sendable () -> Int64 = Timestamp.nowMs) {
        self.bus = bus
        self.log = log
        self.service = service
        self.settings = settings
        self.clock = clock
        core = PlaybackCore(loggedIn: false)
        bus.setStatus("playback", PlaybackEventData.status(core))
    }

    /// `playback.start`.
    func start(filmId: String, episodeNo: Int, unionInfo: String?, drmKek: String?) throws(RPCError) -> JSONValue {
        let missing = settings().missingForPlayback
        guard missing.isEmpty else {
            throw RPCError.daemon(.notConfigured, "play tickets need configuration: \(missing.joined(separator: ", "))",
                                  extra: ["missing": .array(missing.map(JSONValue.string))])
        }
        return try handle(.start(EpisodeRef(filmId: filmId, episodeNo: episodeNo), unionInfo: unionInfo, drmKek: drmKek))
    }

    /// `playback.error`.
    func playerError(position: Double) throws(RPCError) -> JSONValue {
        try handle(.playerError(position: position))
    }

    /// `playback.foreground`.
    func foreground(position: Double) throws(RPCError) -> JSONValue {
        try handle(.foreground(position: position))
    }

    /// `playback.stop`.
    func stop() throws(RPCError) -> JSONValue {
        try handle(.stop)
    }

    /// Who is told when a play request gets 401 or 403.
    func onSessionRefused(_ handler: @escaping (_ token: String, _ source: String) -> Void) {
        sessionRefused = handler
    }

    /// A login or a logout (RoomController): the prefetched tickets belonged to the previous viewer.
    func sessionChanged(_ session: ViewerSession) {
        token = session.token
        _ = try? handle(.sessionChanged(loggedIn: session.isLoggedIn))
    }

    private func fetched(_ requestId: Int, _ result: PlayFetchResult) {
        _ = try? handle(.fetched(requestId: requestId, result))
    }

    /// Feeds one input to the core and performs its effects in order; returns the reply, if any.
    private func handle(_ input: PlaybackInput) throws(RPCError) -> JSONValue {
        let effects = core.handle(input, nowMs: clock())
        var reply: Result<JSONValue, RPCError> = .success(.null)
        var published = false
        for effect in effects {
            switch effect {
            case .state(let episode, let screen):
                published = true
                bus.publish(PlaybackEventData.state(episode, screen), section: "playback",
                                  status: PlaybackEventData.status(core))
            case .play(let episode, let ticket, let startAt):
                let event = PlaybackEventData.play(episode, ticket, startAt: startAt)
                log.info("Playing an episode", fields(episode, ["INTERACTIVE_VID": ticket.vid, "INTERACTIVE_START_AT": "\(startAt)"]))
                bus.publish(event, observerEvent: event.redacted)
            case .preload(let episode, let ticket):
                let event = PlaybackEventData.preload(episode, ticket)
                bus.publish(event, observerEvent: event.redacted)
            case .send(let request):
                send(request)
            case .refusedDeviceValue(let field):
                log.warning("playback.start refused: the player's SDK gave an unusable \(field)", ["INTERACTIVE_FIELD": field])
            case .reply(let result):
                reply = result
            }
        }
        cancelSupersededRequests()
        if !published { bus.setStatus("playback", PlaybackEventData.status(core)) }
        return try reply.get()
    }

    /// Sends a play request in a task of its own: it outlives the method that caused it
    /// (`playback.start` replies with the first state at once; events tell the rest), its
    /// result comes back to the core as `.fetched`, and it is cancelled when superseded.
    private func send(_ request: PlayRequest) {
        guard let token, let endpoint = PlaybackEndpoint(settings: settings(), token: token) else {
            // Answered after the effects of the decision that asked for it.
            EventLoop.shared.execute { [weak self] in self?.fetched(request.id, .networkFailure) }
            return
        }
        log.info("Requesting play tickets", fields(request.episode))
        let service = self.service
        // Unstructured: the request outlives the method call that caused it; the task is kept
        // in `requests` and cancelled when the core stops awaiting its reply. Isolated to the
        // loop actor, as the manager.
        requests[request.id] = Task { [weak self] in
            let result = await service.fetchTickets(request, from: endpoint)
            self?.requestFinished(request, result, token: endpoint.token)
        }
    }

    /// A play request's reply (or failure), made with `token`: handed to the core unless the
    /// request was cancelled; a refused token is reported to the session's owner.
    private func requestFinished(_ request: PlayRequest, _ result: PlayFetchResult, token: String) {
        requests[request.id] = nil
        guard !Task.isCancelled else { return }
        if let failure = Self.failure(result) {
            log.warning("Play request failed: \(failure)", Self.episodeFields(request.episode))
        }
        if result == .sessionRefused { sessionRefused?(token, "play request") }
        fetched(request.id, result)
    }

    /// Cancels every play request in flight (the daemon stops).
    func cancelRequests() {
        for task in requests.values { task.cancel() }
        requests = [:]
    }

    /// Cancels the play requests whose reply the core no longer awaits (a later start, a stop,
    /// another viewer): their connections close at once.
    private func cancelSupersededRequests() {
        for (requestId, task) in requests where !core.awaits(requestId) {
            task.cancel()
            requests[requestId] = nil
        }
    }

    /// Why a request gave no reply, for the log; nil when it did.
    private static func failure(_ result: PlayFetchResult) -> String? {
        switch result {
        case .reply: return nil
        case .networkFailure: return "network error"
        case .timedOut: return "no reply in time"
        case .undecodable: return "the reply does not decode"
        case .sessionRefused: return "the backend refused the viewer's session"
        }
    }

    private func fields(_ episode: EpisodeRef, _ extra: LogFields = [:]) -> LogFields {
        Self.episodeFields(episode).merging(extra)
    }

    private static func episodeFields(_ episode: EpisodeRef) -> LogFields {
        ["INTERACTIVE_FILM_ID": episode.filmId, "INTERACTIVE_EPISODE_NO": String(episode.episodeNo)]
    }
}
