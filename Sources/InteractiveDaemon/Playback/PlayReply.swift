import JSONValue

/// A short-lived play ticket for one episode on this device (BACKEND.md, Playback tickets).
struct PlayTicket: Sendable, Equatable {
    let vid: String
    /// Secret: never logged, `null` in observers' events.
    let playAuthToken: String
    /// When the ticket stops working, in milliseconds since the epoch.
    let expiresAtMs: Int64
    /// The subtitle entries as the backend sent them; empty means none yet, not an error.
    let subtitles: [JSONValue]

    /// How long a ticket must still be valid to be used as it is.
    static let freshnessMarginMs: Int64 = 60_000

    /// More than 60 s left at `nowMs`.
    func isFresh(nowMs: Int64) -> Bool {
        let (left, overflow) = expiresAtMs.subtractingReportingOverflow(nowMs)
        return !overflow && left > Self.freshnessMarginMs
    }

    /// Decodes `{vid, playAuthToken, expiresAt, subtitles}`; nil when a field is missing or bad.
    init?(json: JSONValue) {
        guard let vid = json["vid"]?.stringValue, !vid.isEmpty, let token = json["playAuthToken"]?.stringValue, !token.isEmpty,
              let expires = json["expiresAt"]?.stringValue, let expiresAtMs = InternetDateTime.milliseconds(from: expires)
        else { return nil }
        let subtitles: [JSONValue]
        switch json["subtitles"] {
        case nil, .null?: subtitles = []
        case .array(let list)?: subtitles = list
        default: return nil
        }
        self.init(vid: vid, playAuthToken: token, expiresAtMs: expiresAtMs, subtitles: subtitles)
    }

    init(vid: String, playAuthToken: String, expiresAtMs: Int64, subtitles: [JSONValue] = []) {
        self.vid = vid
        self.playAuthToken = playAuthToken
        self.expiresAtMs = expiresAtMs
        self.subtitles = subtitles
    }
}

/// Why the backend gave no ticket (`outcome` of a reply that is not `ok`).
enum PlayOutcome: String, Sendable, Equatable {
    case locked, unavailable, notReady, busy, broken

    /// A missing or unknown outcome counts as `broken`.
    init(reply value: JSONValue?) {
        self = value?.stringValue.flatMap(PlayOutcome.init(rawValue:)) ?? .broken
    }
}

/// What `POST v1/play` answered, decoded.
enum PlayReply: Sendable, Equatable {
    /// `ok` with `current`, and the tickets of `next` to prefetch.
    case tickets(current: PlayTicket, next: [NextTicket])
    /// Not `ok`, or `ok` without `current`.
    case refused(PlayOutcome)

    /// Decodes a reply body (whatever the HTTP status); nil when it is not the contract's JSON:
    /// not an object, no boolean `ok`, or a `current`/`next` entry that does not decode.
    init?(json: JSONValue) {
        guard let ok = json["ok"]?.boolValue else { return nil }
        guard ok, let currentValue = json["current"], !currentValue.isNull else {
            self = .refused(PlayOutcome(reply: json["outcome"]))
            return
        }
        guard let current = PlayTicket(json: currentValue) else { return nil }
        var next: [NextTicket] = []
        switch json["next"] {
        case nil, .null?: break
        case .array(let entries)?:
            for entry in entries {
                guard let episodeNo = entry["episodeNo"]?.intValue, episodeNo >= 1, let ticketValue = entry["ticket"],
                      let ticket = PlayTicket(json: ticketValue) else { return nil }
                next.append(NextTicket(episodeNo: episodeNo, ticket: ticket))
            }
        default: return nil
        }
        self = .tickets(current: current, next: next)
    }
}

/// One entry of a reply's `next`: a later episode's ticket.
struct NextTicket: Sendable, Equatable {
    let episodeNo: Int
    let ticket: PlayTicket
}

/// How one play request ended, as the decision core takes it.
enum PlayFetchResult: Sendable, Equatable {
    case reply(PlayReply)
    /// No connection, a transport error.
    case networkFailure
    /// No reply within `playbackTimeoutMs`.
    case timedOut
    /// A reply that does not decode (an HTML page, another shape, a bad date).
    case undecodable
}
