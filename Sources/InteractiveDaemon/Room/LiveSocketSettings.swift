import JSONValue
import SocketIO

/// How the daemon's configuration and viewer session become a Socket.IO connection.
struct LiveSocketSettings: Sendable, Equatable {
    let url: String
    let protocolVersion: SocketIOProtocolVersion
    let reconnect: ReconnectPolicy
    let tls: TLSOptions
    let tenant: String
    let os: String

    /// nil when live mode is not configured (see `Settings.missingForLive`).
    init?(_ settings: Settings) {
        guard let url = settings.socketURL, let tenant = settings.tenant, let os = settings.os else { return nil }
        self.url = url
        protocolVersion = settings.protocolVersion == "v2" ? .v2 : .v4
        reconnect = Self.reconnectPolicy(settings)
        tls = TLSOptions(caFile: settings.caFile, insecure: settings.insecureTLS)
        self.tenant = tenant
        self.os = os
    }

    static func reconnectPolicy(_ settings: Settings) -> ReconnectPolicy {
        ReconnectPolicy(baseMs: settings.reconnectBaseMs, capMs: settings.reconnectCapMs, factor: settings.reconnectFactor)
    }

    var configuration: SocketIOConfiguration {
        var configuration = SocketIOConfiguration(url: url)
        configuration.protocolVersion = protocolVersion
        configuration.reconnect = reconnect
        configuration.tls = tls
        configuration.maxMessageBytes = Self.maxMessageBytes
        configuration.reconnectAfterServerDisconnect = Self.serverDisconnectDelay
        return configuration
    }

    /// After a server's DISCONNECT (a backend that shuts down gracefully sends it to every
    /// client) the daemon connects again, the first attempt after 5 to 10 s (docs/ipc.md).
    static let serverDisconnectDelay: Duration = .seconds(5)

    /// The largest message the daemon takes from the backend (and the most bytes of binary
    /// attachments one packet may carry). Overlays and results are small JSON; a larger message
    /// drops the connection, which is made again (docs/ipc.md, "Limits").
    static let maxMessageBytes = 1 << 20

    /// Handshake headers and auth for the viewer (BACKEND.md, Handshake). Read again before
    /// every connection attempt, so a new login applies to the next connection.
    func credentials(for session: ViewerSession) -> SocketIOCredentials {
        var headers = ["x-tenant-id": tenant, "os": os]
        var auth: JSONValue = [:]
        var query: [String: String] = [:]
        if let token = session.token {
            headers["Authorization"] = "Bearer \(token)"
            auth = ["token": .string(token), "userId": JSONValue(session.userId)]
            if protocolVersion == .v2 { query["token"] = token }
        }
        return SocketIOCredentials(headers: headers, auth: auth, query: query)
    }
}

extension ReconnectPolicy {
    /// The policy of the daemon's default configuration (`reconnect` in `ConfigLayers.defaults`),
    /// for the fleet simulation (Benchmarks/fleet).
    public static var daemonDefault: ReconnectPolicy {
        LiveSocketSettings.reconnectPolicy(Settings(ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: "/")).effective))
    }
}
