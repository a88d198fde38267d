import SocketIO

/// The configuration the voice core works with (docs/ipc.md, Voice rooms: configuration).
struct VoiceSettings: Sendable, Equatable {
    /// `voiceUrl`; nil: voice is not configured.
    var url: String?
    /// `voiceApiSecret` and `voiceToken`: secrets.
    var credentials: JanusCredentials
    var createRooms: Bool
    var source: String
    var sink: String
    var echoCancel: Bool
    var ice: [String]
    /// The backend's reconnection backoff (`reconnect`), used for the voice server too.
    var reconnect: ReconnectPolicy

    init(url: String?, credentials: JanusCredentials = JanusCredentials(), createRooms: Bool = ConfigDefaults.voiceCreateRooms,
         source: String = ConfigDefaults.voiceSource, sink: String = ConfigDefaults.voiceSink,
         echoCancel: Bool = ConfigDefaults.voiceEchoCancel, ice: [String] = [], reconnect: ReconnectPolicy = ReconnectPolicy()) {
        self.url = url
        self.credentials = credentials
        self.createRooms = createRooms
        self.source = source
        self.sink = sink
        self.echoCancel = echoCancel
        self.ice = ice
        self.reconnect = reconnect
    }

    init(_ settings: Settings) {
        self.init(url: settings.voiceURL,
                  credentials: JanusCredentials(apiSecret: settings.voiceAPISecret, token: settings.voiceToken),
                  createRooms: settings.voiceCreateRooms, source: settings.voiceSource, sink: settings.voiceSink,
                  echoCancel: settings.voiceEchoCancel, ice: settings.voiceICE,
                  reconnect: LiveSocketSettings.reconnectPolicy(settings))
    }

    /// The configuration keys a voice room needs that are not set.
    var missing: [String] { url == nil ? ["voiceUrl"] : [] }
}
