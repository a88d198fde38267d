import JSONValue

/// A short-lived play ticket for one episode on this device (BACKEND.md, Playback tickets).
struct PlayTicket: Sendable, Equatable {
    let vid: String
    /// Secret: never logged, `null` in observers' events.
    let playAuthToken: String
    /// When the ticket stops working, in milliseconds since the epoch.
    let expiresAtMs: Int64
    /// The subtitle entries the backend sent that a player may load (see `init(_:_:)`); empty
    /// means none yet, not an error.
    let subtitles: [JSONValue]

    /// How long a ticket must still be valid to be used as it is.
    static let freshnessMarginMs: Int64 = 60_000

    /// More than 60 s left at `nowMs`.
    func isFresh(nowMs: Int64) -> Bool {
        let (left, overflow) = expiresAtMs.subtractingReportingOverflow(nowMs)
        return !overflow && left > Self.freshnessMarginMs
    }

    /// The longest `vid` and `playAuthToken` taken, in characters (docs/ipc.md, "Limits"): a
    /// longer one is refused, not cut (a cut ticket would not play).
    static let maxValueCharacters = PeerText.limit
    /// The most subtitle entries kept; the rest are dropped.
    static let maxSubtitles = 16
    /// The most JSON of one subtitle entry kept; a larger entry is dropped.
    static let maxSubtitleEntryBytes = 8 * 1024

    /// Decodes `{vid, playAuthToken, expiresAt, subtitles}` at `span`; nil when a field is
    /// missing or bad: a `vid` or `playAuthToken` that is empty, longer than
    /// `maxValueCharacters` or holds a control character, an `expiresAt` that is not an internet
    /// date-time of years 1970 to 9999. Subtitle entries are kept when they are objects with an
    /// `http(s)` `url` (`PlayerURL`), of their members only short strings (`PeerText.limit`,
    /// no control characters), numbers and booleans, at most `maxSubtitles`.
    init?(_ document: JSONDocument, _ span: JSONSpan) {
        guard document.kind(of: span) == .object,
              let vid = Self.value(document, "vid", of: span), let token = Self.value(document, "playAuthToken", of: span),
              let expiresSpan = document.member("expiresAt", of: span), expiresSpan.range.count <= 64,
              let expires = document.value(expiresSpan).stringValue, let expiresAtMs = InternetDateTime.milliseconds(from: expires)
        else { return nil }
        var subtitles: [JSONValue] = []
        if let list = document.member("subtitles", of: span) {
            switch document.kind(of: list) {
            case .null: break
            case .array:
                document.forEachElement(of: list) { entry in
                    if entry.range.count <= Self.maxSubtitleEntryBytes, let kept = Self.subtitle(document.value(entry)) {
                        subtitles.append(kept)
                    }
                    return subtitles.count < Self.maxSubtitles
                }
            default: return nil
            }
        }
        self.init(vid: vid, playAuthToken: token, expiresAtMs: expiresAtMs, subtitles: subtitles)
    }

    /// A ticket value: a non-empty string of at most `maxValueCharacters`, without control characters.
    private static func value(_ document: JSONDocument, _ key: String, of span: JSONSpan) -> String? {
        guard let member = document.member(key, of: span), member.range.count <= 8 * maxValueCharacters + 2,
              let text = document.value(member).stringValue, !text.isEmpty, text.unicodeScalars.count <= maxValueCharacters,
              !text.containsControlCharacters else { return nil }
        return text
    }

    /// What a player gets of one subtitle entry, or nil to drop it.
    private static func subtitle(_ entry: JSONValue) -> JSONValue? {
        guard case .object(let members) = entry, let url = members["url"]?.stringValue, PlayerURL.isLoadable(url) else { return nil }
        var kept: JSONObject = [:]
        for (name, value) in members where name.unicodeScalars.count <= 64 && !name.containsControlCharacters {
            switch value {
            case .string(let text) where name == "url" || (text.unicodeScalars.count <= PeerText.limit && !text.containsControlCharacters):
                kept[name] = value
            case .number, .bool: kept[name] = value
            default: continue
            }
        }
        return .object(kept)
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

    /// The most `next` entries read; the rest are not looked at.
    static let maxNext = 10

    /// Decodes a reply (whatever the HTTP status) at `nowMs`; nil when it is not the contract's
    /// JSON: not an object, no boolean `ok`, a `current` that does not decode or has expired
    /// already (it would not play), or one of the first `maxNext` entries of `next` that does
    /// not decode. An entry of `next` that has expired already is dropped.
    init?(_ document: JSONDocument, nowMs: Int64) {
        let root = document.root
        guard document.kind(of: root) == .object, let ok = document.member("ok", of: root).map(document.value)?.boolValue else {
            return nil
        }
        guard ok, let currentSpan = document.member("current", of: root), document.kind(of: currentSpan) != .null else {
            self = .refused(PlayOutcome(reply: document.member("outcome", of: root).map(document.value)))
            return
        }
        guard let current = PlayTicket(document, currentSpan), current.expiresAtMs > nowMs else { return nil }
        var next: [NextTicket] = []
        if let list = document.member("next", of: root), document.kind(of: list) != .null {
            guard let entries = document.elements(of: list, limit: Self.maxNext) else { return nil }
            for entry in entries {
                guard document.kind(of: entry) == .object,
                      let episodeNo = document.member("episodeNo", of: entry).map(document.value)?.intValue, episodeNo >= 1,
                      let ticketSpan = document.member("ticket", of: entry), let ticket = PlayTicket(document, ticketSpan) else {
                    return nil
                }
                if ticket.expiresAtMs > nowMs { next.append(NextTicket(episodeNo: episodeNo, ticket: ticket)) }
            }
        }
        self = .tickets(current: current, next: next)
    }

    /// Decodes a reply already parsed (tests build replies as values).
    init?(json: JSONValue, nowMs: Int64) {
        guard let document = try? JSONDocument(validating: json.serialized()) else { return nil }
        self.init(document, nowMs: nowMs)
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
    /// HTTP 401 or 403: the backend refused the viewer's session token.
    case sessionRefused
}
