import JSONValue

/// Why an episode does not play (`playback.state` `code`, for `paywall` and `message`): stable
/// names a player translates its own texts by (`text` is the daemon's English).
public enum PlaybackCode: String, Sendable, CaseIterable {
    /// The viewer's plan does not include it (`paywall`).
    case locked
    case unavailable
    case notReady
    case busy
    /// The backend failed, or said something unknown; also a refresh that failed.
    case broken
    /// A timeout, a network error or a reply that does not decode.
    case network
    /// The player's SDK gave unusable device values (a set-up bug: alert, don't loop).
    case deviceValues
    /// The backend refused the viewer's session (401/403): log in again.
    case expired
}

/// What the player shows for an episode (`playback.state` `state`, with `text`, `canRetry` and
/// `code` for a message; a paywall's code is `locked`).
public enum PlaybackScreenState: Sendable, Equatable {
    case loading
    case playing
    case paywall
    case message(String, canRetry: Bool, code: PlaybackCode)
}

/// `playback.state`: the screen for an episode. Before any decision `state` (and the episode)
/// is null.
public struct PlaybackStateEvent: EventData {
    public static let type = EventType.playbackState
    public var filmId: String?
    public var episodeNo: Int?
    public var screen: PlaybackScreenState?

    public init(filmId: String?, episodeNo: Int?, screen: PlaybackScreenState?) {
        self.filmId = filmId
        self.episodeNo = episodeNo
        self.screen = screen
    }

    public init?(data: JSONValue) {
        guard data.objectValue != nil else { return nil }
        let screen: PlaybackScreenState?
        switch data["state"]?.stringValue {
        case "loading": screen = .loading
        case "playing": screen = .playing
        case "paywall": screen = .paywall
        case "message":
            screen = .message(data["text"]?.stringValue ?? "", canRetry: data["canRetry"]?.boolValue ?? false,
                              code: data["code"]?.stringValue.flatMap(PlaybackCode.init(rawValue:)) ?? .broken)
        default: screen = nil
        }
        self.init(filmId: data["filmId"]?.stringValue, episodeNo: data["episodeNo"]?.intValue, screen: screen)
    }

    public var data: JSONValue {
        var members: JSONObject = ["filmId": JSONValue(filmId), "episodeNo": JSONValue(episodeNo)]
        switch screen {
        case nil: members["state"] = .null
        case .loading?: members["state"] = "loading"
        case .playing?: members["state"] = "playing"
        case .paywall?:
            members["state"] = "paywall"
            members["code"] = .string(PlaybackCode.locked.rawValue)
        case .message(let text, let canRetry, let code)?:
            members["state"] = "message"
            members["text"] = .string(text)
            members["canRetry"] = .bool(canRetry)
            members["code"] = .string(code.rawValue)
        }
        return .object(members)
    }
}

/// `playback.play`: call the SDK's play with the ticket at `startAt` seconds and add the
/// subtitles. `playAuthToken` is a secret, null for observers, and so are the subtitles' URLs (`redacted`).
public struct PlaybackPlayEvent: EventData {
    public static let type = EventType.playbackPlay
    public var filmId: String
    public var episodeNo: Int
    public var vid: String
    public var playAuthToken: String?
    public var startAt: Double
    /// The backend's list (`{lang, url}`); empty means none yet.
    public var subtitles: [JSONValue]
    /// RFC 3339 with milliseconds.
    public var expiresAt: String

    public init(filmId: String, episodeNo: Int, vid: String, playAuthToken: String?, startAt: Double, subtitles: [JSONValue],
                expiresAt: String) {
        self.filmId = filmId
        self.episodeNo = episodeNo
        self.vid = vid
        self.playAuthToken = playAuthToken
        self.startAt = startAt
        self.subtitles = subtitles
        self.expiresAt = expiresAt
    }

    public init?(data: JSONValue) {
        guard let filmId = data["filmId"]?.stringValue, let episodeNo = data["episodeNo"]?.intValue, let vid = data["vid"]?.stringValue,
              let startAt = data["startAt"]?.doubleValue, let expiresAt = data["expiresAt"]?.stringValue else { return nil }
        self.init(filmId: filmId, episodeNo: episodeNo, vid: vid, playAuthToken: data["playAuthToken"]?.stringValue,
                  startAt: startAt, subtitles: data["subtitles"]?.arrayValue ?? [], expiresAt: expiresAt)
    }

    /// What observers get: no token, and subtitles without their (possibly signed) URLs.
    public var redacted: PlaybackPlayEvent {
        var copy = self
        copy.playAuthToken = nil
        copy.subtitles = subtitles.map { ["lang": $0["lang"] ?? .null, "url": .null] }
        return copy
    }

    public var data: JSONValue {
        ["filmId": .string(filmId), "episodeNo": .number(Double(episodeNo)), "vid": .string(vid),
         "playAuthToken": JSONValue(playAuthToken), "startAt": .number(startAt), "subtitles": .array(subtitles),
         "expiresAt": .string(expiresAt)]
    }
}

/// `playback.preload`: call the SDK's preload with the ticket. `playAuthToken` is null for observers.
public struct PlaybackPreloadEvent: EventData {
    public static let type = EventType.playbackPreload
    public var filmId: String
    public var episodeNo: Int
    public var vid: String
    public var playAuthToken: String?

    public init(filmId: String, episodeNo: Int, vid: String, playAuthToken: String?) {
        self.filmId = filmId
        self.episodeNo = episodeNo
        self.vid = vid
        self.playAuthToken = playAuthToken
    }

    public init?(data: JSONValue) {
        guard let filmId = data["filmId"]?.stringValue, let episodeNo = data["episodeNo"]?.intValue,
              let vid = data["vid"]?.stringValue else { return nil }
        self.init(filmId: filmId, episodeNo: episodeNo, vid: vid, playAuthToken: data["playAuthToken"]?.stringValue)
    }

    /// What observers get: the same without the token.
    public var redacted: PlaybackPreloadEvent {
        var copy = self
        copy.playAuthToken = nil
        return copy
    }

    public var data: JSONValue {
        ["filmId": .string(filmId), "episodeNo": .number(Double(episodeNo)), "vid": .string(vid),
         "playAuthToken": JSONValue(playAuthToken)]
    }
}
