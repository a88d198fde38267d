import JSONValue

/// One configuration key as interactived.conf(5) documents it.
public struct ConfigKeyReference: Sendable {
    public let name: String
    /// Whether `config.set` may change it.
    public let runtime: Bool
    /// The default, as people read it ("none" when there is none).
    public let defaultText: String
    /// The daemon's flag that sets it, if any.
    public let flag: String?
    /// What it means and which values it takes; empty when nobody documented it yet (a test fails then).
    public let meaning: String
}

/// The configuration keys for the manual: names, runtime and flags from the key table
/// (`ConfigKeys`, `DaemonOptions`), defaults from `ConfigDefaults`, meanings from here.
public enum ConfigReference {
    public static var keys: [ConfigKeyReference] {
        let defaults = ConfigDefaults.layer(stateDirectory: ConfigDefaults.rootStateDirectory)
        return ConfigKeys.all.map { key in
            let documented = documentation[key.name]
            let defaultText = documented?.defaultText ?? defaults[key.name].map { $0.jsonText } ?? "none"
            return ConfigKeyReference(name: key.name, runtime: key.runtime, defaultText: defaultText,
                                      flag: DaemonOptions.flag(forKey: key.name), meaning: documented?.meaning ?? "")
        }
    }

    /// Meanings, and defaults that are not a plain value.
    private static let documentation: [String: (defaultText: String?, meaning: String)] = [
        "environment": (nil, "dev, stg or prod: selects the backend URLs (prod has them built in; dev and stg must configure socketUrl and apiUrl)."),
        "tenant": (nil, "The tenant id, sent to the backend with every connection and request."),
        "os": (nil, "The platform string sent to the backend (handshake header, join-room, answers, the VOD path, targets)."),
        "deviceClass": (nil, "The device class reported in tracking (clientContext.deviceClass)."),
        "viewport": (nil, "{\"width\":W,\"height\":H}: the screen size reported in tracking until a player reports its video area (player.viewport)."),
        "socketUrl": ("none; with environment prod: \"\(ConfigDefaults.prodSocketURL)\"",
                      "Origin of the Socket.IO server: ws://, wss://, http:// or https://; the path /socket.io/ is added."),
        "apiUrl": ("none; with environment prod: \"\(ConfigDefaults.prodAPIURL)\"",
                   "Origin of the REST API: http:// or https://; the API's paths are appended as written."),
        "leaderboardUrl": (nil, "The leaderboard page's URL; mediaId and tenant are added as query parameters."),
        "httpTimeoutMs": (nil, "Timeout of one REST call, in milliseconds (100 to 600000)."),
        "statusWaitMs": (nil, "How long the first overlays after a join wait for the backend's interactive status (the timelines the viewer answered elsewhere), in milliseconds (0 to 600000); past it they are shown without it."),
        "answerConfirmTimeoutMs": (nil, "How long a bet confirmation (answer.confirm) waits for the viewer before the bet is declined, in milliseconds (100 to 3600000)."),
        "playbackUrl": ("apiUrl", "Origin of the playback API that issues play tickets (POST v1/play): http:// or https://."),
        "playbackTimeoutMs": (nil, "Timeout of one play-ticket request, in milliseconds (100 to 600000)."),
        "scenarioMaxBytes": (nil, "The largest VOD scenario the daemon reads, in bytes (65536 to 16777216); a larger one is refused as soon as it shows, and the join fails with interactive.ScenarioUnavailable. Every other REST reply is bounded to 256 KiB."),
        "rememberSession": (nil, "true keeps the viewer's session (its token included) in the store, so that a restarted daemon logs the viewer in again; false keeps it in memory only: nothing of the session is written, one already kept is erased, and a restart comes back anonymous."),
        "caFile": (nil, "A PEM file of extra certificate authorities trusted for TLS."),
        "insecureTLS": (nil, "true turns off TLS certificate checks: development only, logged as a warning at every connection."),
        "protocol": (nil, "v4: Engine.IO 4 and Socket.IO protocol 5 (servers of Socket.IO 3 and 4); v2: Engine.IO 3 and Socket.IO protocol 4 (servers of Socket.IO 2; the token goes in the query)."),
        "reconnect": (nil, "{\"baseMs\":B,\"capMs\":C,\"factor\":F}: the backoff between reconnection attempts, with full jitter (capMs not below baseMs)."),
        "stateDirectory": ("$STATE_DIRECTORY, else /var/lib/interactived as root, else $XDG_STATE_HOME/interactived, else ~/.local/state/interactived",
                           "Where the SQLite store lives (answered timelines, pending tracking acks, runtime configuration). A corrupt store is renamed <name>.corrupt-<time> and a fresh one started. An absolute path."),
        "maxClients": (nil, "How many local connections the daemon serves at once (1 to 65536): an eighth of them (at most 32) are kept for the control role and one user other than root may hold 64; more are refused with interactive.TooManyClients."),
        "privilegedGroup": (nil, "Members of this group (and root and the daemon's own user) have the control role on the local socket; every other user is an observer."),
        "logTarget": (nil, "auto (the journal when run by systemd, else standard error), journal, or stderr."),
        "voiceUrl": (nil, "The voice server's WebSocket API (Janus, subprotocol janus-protocol): ws:// or wss://. Voice rooms need it."),
        "voiceApiSecret": (nil, "The voice server's API secret (Janus api_secret), sent with every request. A secret: never logged, shown as \"(set)\"."),
        "voiceToken": (nil, "The voice server's auth token (Janus token_auth), sent with every request. A secret: never logged, shown as \"(set)\"."),
        "voiceCreateRooms": (nil, "true: a voice room that does not exist is created (until the server restarts); false: voice.join answers interactive.NoRoom."),
        "voiceSource": (nil, "The microphone as a GStreamer pipeline fragment (for example pulsesrc or alsasrc device=hw:1). Configuration file only."),
        "voiceSink": (nil, "The speaker as a GStreamer pipeline fragment (for example pulsesink or alsasink device=hw:0). Configuration file only."),
        "voiceEchoCancel": (nil, "true: echo cancellation with webrtcdsp when the element is installed. Configuration file only."),
        "voiceIce": (nil, "STUN and TURN servers for voice media: a list of up to 16 stun:, stuns:, turn: or turns: URLs."),
    ]
}
