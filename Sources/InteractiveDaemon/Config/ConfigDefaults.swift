import JSONValue

/// The built-in configuration defaults (docs/ipc.md, Configuration), written once: the defaults
/// layer (`ConfigLayers.defaults`), the typed `Settings` and the manual (`ConfigReference`) read
/// them from here.
enum ConfigDefaults {
    static let deviceClass = "settopbox"
    static let viewportWidth = 1920
    static let viewportHeight = 1080
    static let httpTimeoutMs = 10_000
    static let statusWaitMs = 2_000
    static let answerConfirmTimeoutMs = 60_000
    static let playbackTimeoutMs = 15_000
    static let scenarioMaxBytes = 4 << 20
    static let rememberSession = true
    static let insecureTLS = false
    static let protocolVersion = "v4"
    static let reconnectBaseMs = 500
    static let reconnectCapMs = 30_000
    static let reconnectFactor: Double = 2
    /// The state directory of a daemon run as root without `$STATE_DIRECTORY`.
    static let rootStateDirectory = "/var/lib/interactived"
    static let maxClients = 1024
    static let privilegedGroup = "interactive"
    static let logTarget = LogTarget.auto
    static let voiceCreateRooms = true
    static let voiceSource = "autoaudiosrc"
    static let voiceSink = "autoaudiosink"
    static let voiceEchoCancel = true
    /// The URLs `environment: prod` implies; dev and stg have none built in.
    static let prodSocketURL = "wss://wsk.onplay.live"
    static let prodAPIURL = "https://api.onplay.live"

    /// The defaults layer, every key that has a default in normal form.
    static func layer(stateDirectory: String) -> JSONObject {
        [
            "deviceClass": .string(deviceClass),
            "viewport": ["width": .number(Double(viewportWidth)), "height": .number(Double(viewportHeight))],
            "httpTimeoutMs": .number(Double(httpTimeoutMs)),
            "statusWaitMs": .number(Double(statusWaitMs)),
            "answerConfirmTimeoutMs": .number(Double(answerConfirmTimeoutMs)),
            "playbackTimeoutMs": .number(Double(playbackTimeoutMs)),
            "scenarioMaxBytes": .number(Double(scenarioMaxBytes)),
            "rememberSession": .bool(rememberSession),
            "insecureTLS": .bool(insecureTLS),
            "protocol": .string(protocolVersion),
            "reconnect": ["baseMs": .number(Double(reconnectBaseMs)), "capMs": .number(Double(reconnectCapMs)),
                          "factor": .number(reconnectFactor)],
            "stateDirectory": .string(stateDirectory),
            "maxClients": .number(Double(maxClients)),
            "privilegedGroup": .string(privilegedGroup),
            "logTarget": .string(logTarget.rawValue),
            "voiceCreateRooms": .bool(voiceCreateRooms),
            "voiceSource": .string(voiceSource),
            "voiceSink": .string(voiceSink),
            "voiceEchoCancel": .bool(voiceEchoCancel),
            "voiceIce": [],
        ]
    }
}
