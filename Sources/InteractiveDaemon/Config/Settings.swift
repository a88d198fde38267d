import JSONValue

/// The effective configuration, typed, as the rest of the daemon reads it.
public struct Settings: Sendable, Equatable {
    public enum Environment: String, Sendable { case dev, stg, prod }

    public var environment: Environment?
    public var tenant: String?
    public var os: String?
    public var deviceClass: String
    public var viewportWidth: Int
    public var viewportHeight: Int
    public var socketURL: String?
    public var apiURL: String?
    public var leaderboardURL: String?
    public var httpTimeoutMs: Int
    /// How long the first overlays after a join wait for the interactive status (`statusWaitMs`).
    public var statusWaitMs: Int
    /// How long a bet confirmation (`answer.confirm`) waits for the viewer before it is declined.
    public var answerConfirmTimeoutMs: Int
    /// Origin of the playback API (`playbackUrl`, else `apiUrl`).
    public var playbackURL: String?
    /// Timeout of one play request (`playbackTimeoutMs`).
    public var playbackTimeoutMs: Int
    /// The largest VOD scenario read, in bytes (`scenarioMaxBytes`).
    public var scenarioMaxBytes: Int
    /// Whether the viewer's session is kept in the store for a restart (`rememberSession`).
    public var rememberSession: Bool
    public var caFile: String?
    public var insecureTLS: Bool
    /// `v4` (Engine.IO 4, Socket.IO 5) or `v2` (Engine.IO 3, Socket.IO 4).
    public var protocolVersion: String
    public var reconnectBaseMs: Int
    public var reconnectCapMs: Int
    public var reconnectFactor: Double
    public var stateDirectory: String
    public var maxClients: Int
    public var privilegedGroup: String
    public var logTarget: LogTarget
    /// The voice server's WebSocket API (`voiceUrl`).
    public var voiceURL: String?
    /// Secrets of the voice server (`voiceApiSecret`, `voiceToken`): never logged.
    public var voiceAPISecret: String?
    public var voiceToken: String?
    public var voiceCreateRooms: Bool
    /// The media process's microphone and speaker pipelines, and its echo cancellation.
    public var voiceSource: String
    public var voiceSink: String
    public var voiceEchoCancel: Bool
    /// STUN and TURN servers of the voice media (`voiceIce`).
    public var voiceICE: [String]

    init(_ effective: JSONObject) {
        environment = effective["environment"]?.stringValue.flatMap(Environment.init(rawValue:))
        tenant = effective["tenant"]?.stringValue
        os = effective["os"]?.stringValue
        deviceClass = effective["deviceClass"]?.stringValue ?? ConfigDefaults.deviceClass
        viewportWidth = effective["viewport"]?["width"]?.intValue ?? ConfigDefaults.viewportWidth
        viewportHeight = effective["viewport"]?["height"]?.intValue ?? ConfigDefaults.viewportHeight
        socketURL = effective["socketUrl"]?.stringValue
        apiURL = effective["apiUrl"]?.stringValue
        leaderboardURL = effective["leaderboardUrl"]?.stringValue
        httpTimeoutMs = effective["httpTimeoutMs"]?.intValue ?? ConfigDefaults.httpTimeoutMs
        statusWaitMs = effective["statusWaitMs"]?.intValue ?? ConfigDefaults.statusWaitMs
        answerConfirmTimeoutMs = effective["answerConfirmTimeoutMs"]?.intValue ?? ConfigDefaults.answerConfirmTimeoutMs
        playbackURL = effective["playbackUrl"]?.stringValue ?? apiURL
        playbackTimeoutMs = effective["playbackTimeoutMs"]?.intValue ?? ConfigDefaults.playbackTimeoutMs
        scenarioMaxBytes = effective["scenarioMaxBytes"]?.intValue ?? ConfigDefaults.scenarioMaxBytes
        rememberSession = effective["rememberSession"]?.boolValue ?? ConfigDefaults.rememberSession
        caFile = effective["caFile"]?.stringValue
        insecureTLS = effective["insecureTLS"]?.boolValue ?? ConfigDefaults.insecureTLS
        protocolVersion = effective["protocol"]?.stringValue ?? ConfigDefaults.protocolVersion
        reconnectBaseMs = effective["reconnect"]?["baseMs"]?.intValue ?? ConfigDefaults.reconnectBaseMs
        reconnectCapMs = effective["reconnect"]?["capMs"]?.intValue ?? ConfigDefaults.reconnectCapMs
        reconnectFactor = effective["reconnect"]?["factor"]?.doubleValue ?? ConfigDefaults.reconnectFactor
        stateDirectory = effective["stateDirectory"]?.stringValue ?? ConfigDefaults.rootStateDirectory
        maxClients = effective["maxClients"]?.intValue ?? ConfigDefaults.maxClients
        privilegedGroup = effective["privilegedGroup"]?.stringValue ?? ConfigDefaults.privilegedGroup
        logTarget = effective["logTarget"]?.stringValue.flatMap(LogTarget.init(rawValue:)) ?? ConfigDefaults.logTarget
        voiceURL = effective["voiceUrl"]?.stringValue
        voiceAPISecret = effective["voiceApiSecret"]?.stringValue
        voiceToken = effective["voiceToken"]?.stringValue
        voiceCreateRooms = effective["voiceCreateRooms"]?.boolValue ?? ConfigDefaults.voiceCreateRooms
        voiceSource = effective["voiceSource"]?.stringValue ?? ConfigDefaults.voiceSource
        voiceSink = effective["voiceSink"]?.stringValue ?? ConfigDefaults.voiceSink
        voiceEchoCancel = effective["voiceEchoCancel"]?.boolValue ?? ConfigDefaults.voiceEchoCancel
        voiceICE = effective["voiceIce"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Keys a live room needs that are not set.
    public var missingForLive: [String] {
        var missing: [String] = []
        if tenant == nil { missing.append("tenant") }
        if os == nil { missing.append("os") }
        if socketURL == nil { missing.append("socketUrl") }
        if apiURL == nil { missing.append("apiUrl") }
        return missing
    }

    /// Keys play tickets need that are not set (`apiUrl` stands for `playbackUrl` too).
    public var missingForPlayback: [String] {
        var missing: [String] = []
        if tenant == nil { missing.append("tenant") }
        if playbackURL == nil { missing.append("apiUrl") }
        return missing
    }

    /// Keys a VOD room needs that are not set.
    public var missingForVOD: [String] {
        var missing: [String] = []
        if tenant == nil { missing.append("tenant") }
        if os == nil { missing.append("os") }
        if apiURL == nil { missing.append("apiUrl") }
        return missing
    }
}
