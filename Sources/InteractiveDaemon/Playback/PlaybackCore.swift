import IPCProtocol
import JSONValue

/// One episode of one film.
struct EpisodeRef: Sendable, Hashable {
    let filmId: String
    let episodeNo: Int
}

/// What the viewer sees (`playback.state`), with the seed's texts and the stable code a player
/// translates by.
enum PlaybackScreen: Sendable, Equatable {
    case loading
    case playing
    case paywall
    case message(String, canRetry: Bool, code: PlaybackCode)

    /// "Couldn't load this episode": the backend failed (`broken`, with a retry), or the SDK's
    /// device values are unusable (`deviceValues`, no retry).
    static func couldNotLoad(_ code: PlaybackCode = .broken, canRetry: Bool = true) -> PlaybackScreen {
        .message("Couldn't load this episode", canRetry: canRetry, code: code)
    }

    /// A timeout, a network error or a reply that does not decode.
    static let takingLonger = PlaybackScreen.message("Taking longer than usual", canRetry: true, code: .network)

    /// The backend refused the viewer's session: a retry would meet the same refusal.
    static let sessionExpired = PlaybackScreen.message("Your session has expired: sign in again", canRetry: false, code: .expired)

    /// The screen for a reply that is not `ok`.
    init(_ outcome: PlayOutcome) {
        switch outcome {
        case .locked: self = .paywall
        case .unavailable: self = .message("This title is no longer available", canRetry: false, code: .unavailable)
        case .notReady: self = .message("Not available yet", canRetry: false, code: .notReady)
        case .busy: self = .message("Busy, try again in a moment", canRetry: true, code: .busy)
        case .broken: self = .couldNotLoad()
        }
    }
}

/// A play request to send: for one episode, with this device's values.
struct PlayRequest: Sendable, Equatable {
    /// Matches the request's result to it (`PlaybackInput.fetched`).
    let id: Int
    let episode: EpisodeRef
    let device: DeviceValues
}

/// What the playback decision core is told.
enum PlaybackInput: Sendable, Equatable {
    /// `playback.start`: the viewer chose an episode; the SDK's device values, nil when missing.
    case start(EpisodeRef, unionInfo: String?, drmKek: String?)
    /// `playback.error`: the SDK failed at `position` (an expired ticket included).
    case playerError(position: Double)
    /// `playback.foreground`: back from standby at `position`.
    case foreground(position: Double)
    /// `playback.stop`.
    case stop
    /// A play request ended.
    case fetched(requestId: Int, PlayFetchResult)
    /// A login or a logout: whether a viewer is logged in now.
    case sessionChanged(loggedIn: Bool)
}

/// What the playback decision core asks its shell to do, in order.
enum PlaybackEffect: Sendable, Equatable {
    /// Publish `playback.state`.
    case state(EpisodeRef?, PlaybackScreen)
    /// Publish `playback.play`: the player plays the ticket from `startAt` seconds.
    case play(EpisodeRef, PlayTicket, startAt: Double)
    /// Publish `playback.preload`.
    case preload(EpisodeRef, PlayTicket)
    /// Send `POST v1/play` and feed its result back as `.fetched`.
    case send(PlayRequest)
    /// Log that a device value was refused (its name only, never the value).
    case refusedDeviceValue(field: String)
    /// The reply to the method that caused this input.
    case reply(Result<JSONValue, RPCError>)
}

/// The playback controller of seed 004 as a pure state machine: inputs and the current time in,
/// effects out. It owns the current episode and its ticket, the prefetched tickets of this
/// device and viewer, and the once-per-start refresh flag (IPC.md, Playback tickets).
struct PlaybackCore: Sendable {
    /// The episode that plays and the ticket it plays with.
    struct Current: Sendable, Equatable {
        let episode: EpisodeRef
        let ticket: PlayTicket
    }

    private struct PendingRefresh: Sendable {
        let requestId: Int
        let episode: EpisodeRef
        let position: Double
    }

    /// The most prefetched tickets kept; past it those expiring first go.
    static let maxPrefetched = 32
    /// The shortest time between two refreshes `playback.foreground` makes, in milliseconds: a
    /// player that reports coming back again and again (or tickets that never last a minute)
    /// cannot make a request of each report.
    static let foregroundRefreshIntervalMs: Int64 = 30_000

    private(set) var current: Current?
    /// Tickets of later episodes for this device and viewer.
    private(set) var prefetched: [EpisodeRef: PlayTicket] = [:]
    /// When `playback.foreground` last asked for a fresh ticket.
    private var lastForegroundRefreshMs: Int64?
    /// The last screen state told, and the episode it was about.
    private(set) var screen: (episode: EpisodeRef?, screen: PlaybackScreen)?
    /// Set by the refresh after a player error; reset by `start` (and by a foreground refresh).
    private(set) var refreshedAfterError = false
    private var loggedIn: Bool
    /// The device values of the last accepted start; other values drop the prefetched tickets.
    private var device: DeviceValues?
    private var pendingStart: (requestId: Int, episode: EpisodeRef)?
    private var pendingRefresh: PendingRefresh?
    private var lastRequestId = 0

    init(loggedIn: Bool) {
        self.loggedIn = loggedIn
    }

    /// True while the reply to request `requestId` is still awaited; a request that is not (a
    /// later start, a stop or a session change superseded it) can be abandoned.
    func awaits(_ requestId: Int) -> Bool {
        pendingStart?.requestId == requestId || pendingRefresh?.requestId == requestId
    }

    /// Takes one input at `nowMs` (milliseconds since the epoch, the clock tickets expire by).
    mutating func handle(_ input: PlaybackInput, nowMs: Int64) -> [PlaybackEffect] {
        var effects: [PlaybackEffect] = []
        switch input {
        case .start(let episode, let unionInfo, let drmKek):
            start(episode, unionInfo: unionInfo, drmKek: drmKek, nowMs: nowMs, into: &effects)
        case .playerError(let position):
            refresh(at: position, into: &effects)
        case .foreground(let position):
            let recentlyRefreshed = lastForegroundRefreshMs.map { nowMs - $0 < Self.foregroundRefreshIntervalMs && nowMs >= $0 } ?? false
            guard let current, !current.ticket.isFresh(nowMs: nowMs), !recentlyRefreshed else {
                effects.append(.reply(.success(replyState(refreshing: false))))
                break
            }
            lastForegroundRefreshMs = nowMs
            refreshedAfterError = false
            refresh(at: position, into: &effects)
        case .stop:
            current = nil
            prefetched.removeAll()
            screen = nil
            pendingStart = nil
            pendingRefresh = nil
            refreshedAfterError = false
            effects.append(.reply(.success(PlaybackStopResult().json)))
        case .fetched(let requestId, let result):
            if let pending = pendingStart, pending.requestId == requestId {
                pendingStart = nil
                startFetched(pending.episode, result, into: &effects)
            } else if let pending = pendingRefresh, pending.requestId == requestId {
                pendingRefresh = nil
                refreshFetched(pending, result, into: &effects)
            }
        case .sessionChanged(let loggedIn):
            // Tickets belong to the viewer: the prefetched ones and any reply still to come
            // (it would play the previous viewer's ticket) are dropped.
            self.loggedIn = loggedIn
            prefetched.removeAll()
            pendingRefresh = nil
            if let pending = pendingStart {
                pendingStart = nil
                say(pending.episode, .couldNotLoad(), into: &effects)
            }
        }
        return effects
    }

    // MARK: Start

    private mutating func start(_ episode: EpisodeRef, unionInfo: String?, drmKek: String?, nowMs: Int64,
                                into effects: inout [PlaybackEffect]) {
        let values: DeviceValues
        switch DeviceValues.check(unionInfo: unionInfo, drmKek: drmKek) {
        case .failure(let refusal):
            // An SDK set-up bug: alert, don't loop.
            effects.append(.refusedDeviceValue(field: refusal.field))
            say(episode, .couldNotLoad(.deviceValues, canRetry: false), into: &effects)
            effects.append(.reply(.failure(.daemon(.invalidDeviceValues, "the player's SDK gave an unusable \(refusal.field)",
                                                   extra: ["field": .string(refusal.field)]))))
            return
        case .success(let checked):
            values = checked
        }
        guard loggedIn else {
            effects.append(.reply(.failure(.daemon(.notLoggedIn, "play tickets are per viewer: log in first (session.login)"))))
            return
        }
        if device != values {
            prefetched.removeAll()
            device = values
        }
        refreshedAfterError = false
        pendingRefresh = nil
        say(episode, .loading, into: &effects)
        // A prefetched ticket starts the episode at once; the play request is still sent: it records the view.
        if let ticket = prefetched.removeValue(forKey: episode), ticket.isFresh(nowMs: nowMs) {
            begin(episode, ticket, at: 0, into: &effects)
        }
        let request = makeRequest(episode, values)
        pendingStart = (request.id, episode)
        effects.append(.send(request))
        effects.append(.reply(.success(replyState(refreshing: nil))))
    }

    private mutating func startFetched(_ episode: EpisodeRef, _ result: PlayFetchResult, into effects: inout [PlaybackEffect]) {
        let alreadyPlays = current?.episode == episode
        switch result {
        case .reply(.tickets(let ticket, let next)):
            if !alreadyPlays { begin(episode, ticket, at: 0, into: &effects) }
            for entry in next {
                let later = EpisodeRef(filmId: episode.filmId, episodeNo: entry.episodeNo)
                prefetched[later] = entry.ticket
                effects.append(.preload(later, entry.ticket))
            }
            while prefetched.count > Self.maxPrefetched, let first = prefetched.min(by: { $0.value.expiresAtMs < $1.value.expiresAtMs }) {
                prefetched[first.key] = nil
            }
        case .reply(.refused(let outcome)):
            if !alreadyPlays { say(episode, PlaybackScreen(outcome), into: &effects) }
        case .networkFailure, .timedOut, .undecodable:
            if !alreadyPlays { say(episode, .takingLonger, into: &effects) }
        case .sessionRefused:
            if !alreadyPlays { say(episode, .sessionExpired, into: &effects) }
        }
        // The episode that already plays goes on: a screen left at `loading` says so again.
        if alreadyPlays, screen?.episode != episode || screen?.screen != .playing {
            say(episode, .playing, into: &effects)
        }
    }

    // MARK: Refresh

    /// One fresh ticket for the current episode, resuming at `position`; never a loop.
    private mutating func refresh(at position: Double, into effects: inout [PlaybackEffect]) {
        guard let current, !refreshedAfterError, loggedIn, let device else {
            pendingRefresh = nil
            say(current?.episode ?? screen?.episode, .couldNotLoad(), into: &effects)
            if !loggedIn {
                effects.append(.reply(.failure(.daemon(.notLoggedIn, "play tickets are per viewer: log in first (session.login)"))))
            } else {
                effects.append(.reply(.success(replyState(refreshing: false))))
            }
            return
        }
        refreshedAfterError = true
        let request = makeRequest(current.episode, device)
        pendingRefresh = PendingRefresh(requestId: request.id, episode: current.episode, position: position)
        effects.append(.send(request))
        effects.append(.reply(.success(replyState(refreshing: true))))
    }

    private mutating func refreshFetched(_ pending: PendingRefresh, _ result: PlayFetchResult, into effects: inout [PlaybackEffect]) {
        guard current?.episode == pending.episode else { return }
        switch result {
        case .reply(.tickets(let ticket, _)):
            begin(pending.episode, ticket, at: pending.position, into: &effects)
        case .sessionRefused:
            say(pending.episode, .sessionExpired, into: &effects)
        case .reply(.refused), .networkFailure, .timedOut, .undecodable:
            say(pending.episode, .couldNotLoad(), into: &effects)
        }
    }

    // MARK: Helpers

    private mutating func begin(_ episode: EpisodeRef, _ ticket: PlayTicket, at seconds: Double, into effects: inout [PlaybackEffect]) {
        current = Current(episode: episode, ticket: ticket)
        effects.append(.play(episode, ticket, startAt: seconds))
        say(episode, .playing, into: &effects)
    }

    private mutating func say(_ episode: EpisodeRef?, _ state: PlaybackScreen, into effects: inout [PlaybackEffect]) {
        screen = (episode, state)
        effects.append(.state(episode, state))
    }

    private mutating func makeRequest(_ episode: EpisodeRef, _ device: DeviceValues) -> PlayRequest {
        lastRequestId += 1
        return PlayRequest(id: lastRequestId, episode: episode, device: device)
    }

    /// A method's result: the screen state now (as `playback.state` carries it) and, for
    /// `playback.error` and `playback.foreground`, whether a fresh ticket was requested.
    private func replyState(refreshing: Bool?) -> JSONValue {
        PlaybackResult(screen: PlaybackEventData.state(screen?.episode, screen?.screen), refreshing: refreshing).json
    }
}
