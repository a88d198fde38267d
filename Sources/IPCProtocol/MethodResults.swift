import JSONValue

/// The typed results of the methods a player calls most, read from a reply's `result`.
/// Each `init?(json:)` is nil when a member the protocol guarantees is missing.

/// `daemon.hello`.
public struct HelloResult: Sendable, Equatable {
    public var daemon: String
    public var version: String
    public var protocolVersion: Int
    /// Random per daemon start: a different one means the daemon restarted.
    public var bootId: String
    /// `control` or `observer`.
    public var role: String
    /// The methods this daemon serves.
    public var capabilities: [String]

    public init?(json: JSONValue) {
        guard let daemon = json["daemon"]?.stringValue, let version = json["version"]?.stringValue,
              let protocolVersion = json["protocol"]?.intValue, let bootId = json["bootId"]?.stringValue else { return nil }
        self.daemon = daemon
        self.version = version
        self.protocolVersion = protocolVersion
        self.bootId = bootId
        role = json["role"]?.stringValue ?? "observer"
        capabilities = json["capabilities"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// `events.subscribe`: the daemon's state (`snapshot`, what `daemon.status` returns) and `seq`,
/// the last event the snapshot covers. Events after `seq` follow the reply.
public struct SubscribeResult: Sendable, Equatable {
    public var bootId: String
    public var seq: Int
    public var snapshot: JSONValue

    public init(bootId: String, seq: Int, snapshot: JSONValue) {
        self.bootId = bootId
        self.seq = seq
        self.snapshot = snapshot
    }

    public init?(json: JSONValue) {
        guard let bootId = json["bootId"]?.stringValue, let seq = json["seq"]?.intValue else { return nil }
        self.init(bootId: bootId, seq: seq, snapshot: json["snapshot"] ?? .null)
    }
}

/// `session.login` / `session.logout`, and the data of `session.state`.
public struct SessionState: Sendable, Equatable {
    public var loggedIn: Bool
    public var userId: String?
    public var displayName: String?

    public init?(json: JSONValue) {
        guard let loggedIn = json["loggedIn"]?.boolValue else { return nil }
        self.loggedIn = loggedIn
        userId = json["userId"]?.stringValue
        displayName = json["displayName"]?.stringValue
    }
}

/// A room's mode (`room.join` `mode`).
public enum RoomMode: String, Sendable {
    case live
    case vod
}

/// `room.join`: `state` is `joined`, or `joining` when the live room was not joined within
/// `timeoutMs` (the daemon keeps trying; `room.state` tells the rest).
public struct RoomJoinResult: Sendable, Equatable {
    public var mediaId: String?
    public var mode: String?
    public var state: String

    public init?(json: JSONValue) {
        guard let state = json["state"]?.stringValue else { return nil }
        self.state = state
        mediaId = json["mediaId"]?.stringValue
        mode = json["mode"]?.stringValue
    }
}

/// `overlay.bridge`: whether the daemon knew the message's type, and what it started
/// (`answer`: the outcome arrives as events; `link`: an `overlay.link` event was sent).
public struct BridgeResult: Sendable, Equatable {
    public var handled: Bool
    public var action: String?

    public init?(json: JSONValue) {
        guard let handled = json["handled"]?.boolValue else { return nil }
        self.handled = handled
        action = json["action"]?.stringValue
    }
}
