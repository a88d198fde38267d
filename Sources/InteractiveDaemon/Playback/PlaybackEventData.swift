import IPCProtocol
import JSONValue

/// The playback events (IPC.md, Playback tickets) and the status board's `playback` section,
/// built from the core's state. Observers get a ticket's events without its token (`redacted`).
enum PlaybackEventData {
    /// `playback.state`: `filmId`, `episodeNo`, `state`, `code` for `paywall`, and `text`,
    /// `canRetry` and `code` for `message`.
    /// With no screen state yet, `state` is null.
    static func state(_ episode: EpisodeRef?, _ screen: PlaybackScreen?) -> PlaybackStateEvent {
        let state: PlaybackScreenState? = screen.map { screen in
            switch screen {
            case .loading: return .loading
            case .playing: return .playing
            case .paywall: return .paywall
            case .message(let text, let canRetry, let code): return .message(text, canRetry: canRetry, code: code)
            }
        }
        return PlaybackStateEvent(filmId: episode?.filmId, episodeNo: episode?.episodeNo, screen: state)
    }

    /// `playback.play`: `filmId`, `episodeNo`, `vid`, `playAuthToken`, `startAt`, `subtitles`, `expiresAt`.
    static func play(_ episode: EpisodeRef, _ ticket: PlayTicket, startAt: Double) -> PlaybackPlayEvent {
        PlaybackPlayEvent(filmId: episode.filmId, episodeNo: episode.episodeNo, vid: ticket.vid, playAuthToken: ticket.playAuthToken,
                          startAt: startAt, subtitles: ticket.subtitles, expiresAt: Timestamp.rfc3339(ticket.expiresAtMs))
    }

    /// `playback.preload`: `filmId`, `episodeNo`, `vid`, `playAuthToken`.
    static func preload(_ episode: EpisodeRef, _ ticket: PlayTicket) -> PlaybackPreloadEvent {
        PlaybackPreloadEvent(filmId: episode.filmId, episodeNo: episode.episodeNo, vid: ticket.vid, playAuthToken: ticket.playAuthToken)
    }

    /// The status board's `playback` section: never a ticket's token.
    static func status(_ core: PlaybackCore) -> JSONValue {
        let current: JSONValue = core.current.map { current in
            ["filmId": .string(current.episode.filmId), "episodeNo": JSONValue(current.episode.episodeNo),
             "vid": .string(current.ticket.vid), "expiresAt": .string(Timestamp.rfc3339(current.ticket.expiresAtMs))]
        } ?? .null
        let prefetched = core.prefetched.keys.sorted { ($0.filmId, $0.episodeNo) < ($1.filmId, $1.episodeNo) }.map { episode in
            ["filmId": .string(episode.filmId), "episodeNo": JSONValue(episode.episodeNo)] as JSONValue
        }
        return ["screen": core.screen.map { state($0.episode, $0.screen).data } ?? .null, "current": current,
                "prefetched": .array(prefetched), "refreshedAfterError": .bool(core.refreshedAfterError)]
    }
}
