import JSONValue

/// The `data` of the playback events (IPC.md, Playback tickets). Builders that take a ticket
/// make two versions: the one control clients get, and the one observers get, with
/// `"playAuthToken": null`.
enum PlaybackEventData {
    /// `playback.state`: `filmId`, `episodeNo`, `state`, and `text` and `canRetry` for `message`.
    /// With no screen state yet, `state` is null.
    static func state(_ episode: EpisodeRef?, _ screen: PlaybackScreen?) -> JSONValue {
        var members: [String: JSONValue] = ["filmId": JSONValue(episode?.filmId), "episodeNo": JSONValue(episode?.episodeNo)]
        switch screen {
        case nil: members["state"] = .null
        case .loading?: members["state"] = "loading"
        case .playing?: members["state"] = "playing"
        case .paywall?: members["state"] = "paywall"
        case .message(let text, let canRetry)?:
            members["state"] = "message"
            members["text"] = .string(text)
            members["canRetry"] = .bool(canRetry)
        }
        return .object(members)
    }

    /// `playback.play`: `filmId`, `episodeNo`, `vid`, `playAuthToken`, `startAt`, `subtitles`, `expiresAt`.
    static func play(_ episode: EpisodeRef, _ ticket: PlayTicket, startAt: Double) -> (control: JSONValue, observer: JSONValue) {
        var members = ticketMembers(episode, ticket)
        members["startAt"] = .number(startAt)
        members["subtitles"] = .array(ticket.subtitles)
        members["expiresAt"] = .string(Timestamp.rfc3339(ticket.expiresAtMs))
        return redactedPair(members)
    }

    /// `playback.preload`: `filmId`, `episodeNo`, `vid`, `playAuthToken`.
    static func preload(_ episode: EpisodeRef, _ ticket: PlayTicket) -> (control: JSONValue, observer: JSONValue) {
        redactedPair(ticketMembers(episode, ticket))
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
        return ["screen": core.screen.map { state($0.episode, $0.screen) } ?? .null, "current": current,
                "prefetched": .array(prefetched), "refreshedAfterError": .bool(core.refreshedAfterError)]
    }

    private static func ticketMembers(_ episode: EpisodeRef, _ ticket: PlayTicket) -> [String: JSONValue] {
        ["filmId": .string(episode.filmId), "episodeNo": JSONValue(episode.episodeNo), "vid": .string(ticket.vid),
         "playAuthToken": .string(ticket.playAuthToken)]
    }

    private static func redactedPair(_ members: [String: JSONValue]) -> (control: JSONValue, observer: JSONValue) {
        var redacted = members
        redacted["playAuthToken"] = .null
        return (.object(members), .object(redacted))
    }
}
