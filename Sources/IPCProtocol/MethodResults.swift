import JSONValue

/// The typed result of a method: written by the daemon, read by clients. `init?(json:)` is nil
/// when a member the protocol guarantees is missing; `json` is exactly what the daemon sends
/// (docs/ipc.md; `IPCProtocolTests/WireFormatTests` pin it).
public protocol MethodResult: Sendable {
    init?(json: JSONValue)
    var json: JSONValue { get }
}

/// Results whose shape is open (`config.get`, `config.set`, `interactive.status`: the backend's
/// reply) stay JSON.
extension JSONValue: MethodResult {
    public init?(json: JSONValue) { self = json }
    public var json: JSONValue { self }
}

/// `daemon.hello`.
public struct HelloResult: MethodResult, Equatable {
    public var daemon: String
    public var version: String
    public var protocolVersion: Int
    /// Random per daemon start: a different one means the daemon restarted.
    public var bootId: String
    /// `control` or `observer`.
    public var role: String
    /// The methods this daemon serves.
    public var capabilities: [String]

    public init(daemon: String, version: String, protocolVersion: Int, bootId: String, role: String, capabilities: [String]) {
        self.daemon = daemon
        self.version = version
        self.protocolVersion = protocolVersion
        self.bootId = bootId
        self.role = role
        self.capabilities = capabilities
    }

    public init?(json: JSONValue) {
        guard let daemon = json["daemon"]?.stringValue, let version = json["version"]?.stringValue,
              let protocolVersion = json["protocol"]?.intValue, let bootId = json["bootId"]?.stringValue else { return nil }
        self.init(daemon: daemon, version: version, protocolVersion: protocolVersion, bootId: bootId,
                  role: json["role"]?.stringValue ?? "observer",
                  capabilities: json["capabilities"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    public var json: JSONValue {
        ["daemon": .string(daemon), "version": .string(version), "protocol": .number(Double(protocolVersion)),
         "bootId": .string(bootId), "role": .string(role), "capabilities": .array(capabilities.map(JSONValue.string))]
    }
}

/// `daemon.reload`: the file, the keys whose value in force changed, and the start-only keys the
/// file changes that wait for a restart.
public struct ReloadResult: MethodResult, Equatable {
    public var file: String
    public var changed: [String]
    public var restartNeeded: [String]

    public init(file: String, changed: [String], restartNeeded: [String]) {
        self.file = file
        self.changed = changed
        self.restartNeeded = restartNeeded
    }

    public init?(json: JSONValue) {
        guard let file = json["file"]?.stringValue, let changed = json["changed"]?.arrayValue,
              let restartNeeded = json["restartNeeded"]?.arrayValue else { return nil }
        self.init(file: file, changed: changed.compactMap(\.stringValue), restartNeeded: restartNeeded.compactMap(\.stringValue))
    }

    public var json: JSONValue {
        ["file": .string(file), "changed": .array(changed.map(JSONValue.string)),
         "restartNeeded": .array(restartNeeded.map(JSONValue.string))]
    }
}

/// `events.subscribe`: the daemon's state (`snapshot`, what `daemon.status` returns) and `seq`,
/// the last event the snapshot covers. Events after `seq` follow the reply.
public struct SubscribeResult: MethodResult, Equatable {
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

    public var json: JSONValue { ["bootId": .string(bootId), "seq": .number(Double(seq)), "snapshot": snapshot] }
}

/// `events.unsubscribe`: `{subscribed: false}`.
public struct UnsubscribeResult: MethodResult, Equatable {
    public var subscribed: Bool

    public init(subscribed: Bool = false) {
        self.subscribed = subscribed
    }

    public init?(json: JSONValue) {
        guard let subscribed = json["subscribed"]?.boolValue else { return nil }
        self.init(subscribed: subscribed)
    }

    public var json: JSONValue { ["subscribed": .bool(subscribed)] }
}

/// `session.login` / `session.logout`, the data of `session.state` and the status's `session`:
/// who is watching (never the token).
public struct SessionState: MethodResult, Equatable {
    public var loggedIn: Bool
    public var userId: String?
    public var displayName: String?
    /// The backend refused the viewer's token (a 401/403 on a REST call or a refused CONNECT);
    /// cleared by the next `session.login`.
    public var expired: Bool
    /// False for what observers get: whether someone is logged in, never who (`observed`).
    public private(set) var identified = true

    public init(loggedIn: Bool, userId: String?, displayName: String?, expired: Bool = false) {
        self.loggedIn = loggedIn
        self.userId = userId
        self.displayName = displayName
        self.expired = expired
    }

    public init?(json: JSONValue) {
        guard let loggedIn = json["loggedIn"]?.boolValue else { return nil }
        self.init(loggedIn: loggedIn, userId: json["userId"]?.stringValue, displayName: json["displayName"]?.stringValue,
                  expired: json["expired"]?.boolValue ?? false)
        identified = json["userId"] != nil  // null for an anonymous viewer; absent for observers
    }

    /// The session as observers see it (IPC.md, Roles): `{loggedIn, expired}` only.
    public var observed: SessionState {
        var copy = SessionState(loggedIn: loggedIn, userId: nil, displayName: nil, expired: expired)
        copy.identified = false
        return copy
    }

    public var json: JSONValue {
        guard identified else { return ["loggedIn": .bool(loggedIn), "expired": .bool(expired)] }
        return ["loggedIn": .bool(loggedIn), "userId": JSONValue(userId), "displayName": JSONValue(displayName), "expired": .bool(expired)]
    }
}

/// A room's mode (`room.join` `mode`): live (server-driven) or VOD (driven by the player's clock).
public enum RoomMode: String, Sendable, CaseIterable {
    case live
    case vod
}

/// `room.join`: `state` is `joined`, or `joining` when the live room was not joined within
/// `timeoutMs` (the daemon keeps trying; `room.state` tells the rest), or `left` (without media
/// and mode) when another join took its place meanwhile.
public struct RoomJoinResult: MethodResult, Equatable {
    public var mediaId: String?
    public var mode: String?
    public var state: String

    public init(mediaId: String?, mode: String?, state: String) {
        self.mediaId = mediaId
        self.mode = mode
        self.state = state
    }

    public init?(json: JSONValue) {
        guard let state = json["state"]?.stringValue else { return nil }
        self.init(mediaId: json["mediaId"]?.stringValue, mode: json["mode"]?.stringValue, state: state)
    }

    public var json: JSONValue {
        var members: JSONObject = ["state": .string(state)]
        members.setIfPresent("mediaId", mediaId.map(JSONValue.string))
        members.setIfPresent("mode", mode.map(JSONValue.string))
        return .object(members)
    }
}

/// `room.leave`: `{state: "left", mediaId}`.
public struct RoomLeaveResult: MethodResult, Equatable {
    public var mediaId: String
    public var state: String

    public init(mediaId: String, state: String = "left") {
        self.mediaId = mediaId
        self.state = state
    }

    public init?(json: JSONValue) {
        guard let mediaId = json["mediaId"]?.stringValue, let state = json["state"]?.stringValue else { return nil }
        self.init(mediaId: mediaId, state: state)
    }

    public var json: JSONValue { ["state": .string(state), "mediaId": .string(mediaId)] }
}

/// `player.time` answered as a request: the position taken.
public struct PlayerTimeResult: MethodResult, Equatable {
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    public init?(json: JSONValue) {
        guard let seconds = json["seconds"]?.doubleValue else { return nil }
        self.init(seconds: seconds)
    }

    public var json: JSONValue { ["seconds": .number(seconds)] }
}

/// `player.state`: the state taken.
public struct PlayerStateResult: MethodResult, Equatable {
    public var state: String

    public init(state: String) {
        self.state = state
    }

    public init?(json: JSONValue) {
        guard let state = json["state"]?.stringValue else { return nil }
        self.init(state: state)
    }

    public var json: JSONValue { ["state": .string(state)] }
}

/// `{ok: true}`: `overlay.attached`, `overlay.dismiss`, `answer.confirm`.
public struct OKResult: MethodResult, Equatable {
    public var ok: Bool

    public init(ok: Bool = true) {
        self.ok = ok
    }

    public init?(json: JSONValue) {
        guard let ok = json["ok"]?.boolValue else { return nil }
        self.init(ok: ok)
    }

    public var json: JSONValue { ["ok": .bool(ok)] }
}

/// `overlay.rendered`: whether this report was recorded (the first one is).
public struct RenderedResult: MethodResult, Equatable {
    public var recorded: Bool

    public init(recorded: Bool) {
        self.recorded = recorded
    }

    public init?(json: JSONValue) {
        guard let recorded = json["recorded"]?.boolValue else { return nil }
        self.init(recorded: recorded)
    }

    public var json: JSONValue { ["recorded": .bool(recorded)] }
}

/// `overlay.bridge`: whether the daemon knew the message's type, and what it started
/// (`answer`: the outcome arrives as events; `link`: an `overlay.link` event was sent).
public struct BridgeResult: MethodResult, Equatable {
    public var handled: Bool
    public var action: String?

    public init(handled: Bool, action: String? = nil) {
        self.handled = handled
        self.action = action
    }

    public init?(json: JSONValue) {
        guard let handled = json["handled"]?.boolValue else { return nil }
        self.init(handled: handled, action: json["action"]?.stringValue)
    }

    public var json: JSONValue {
        var members: JSONObject = ["handled": .bool(handled)]
        members.setIfPresent("action", action.map(JSONValue.string))
        return .object(members)
    }
}

/// `predict.open`: the dialog overlay shown for the timeline.
public struct PredictOpenResult: MethodResult, Equatable {
    public var overlayId: String
    public var timelineId: String
    /// `predict` or `lucky`.
    public var kind: String

    public init(overlayId: String, timelineId: String, kind: String) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.kind = kind
    }

    public init?(json: JSONValue) {
        guard let overlayId = json["overlayId"]?.stringValue, let timelineId = json["timelineId"]?.stringValue,
              let kind = json["kind"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, kind: kind)
    }

    public var json: JSONValue { ["overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": .string(kind)] }
}

/// `leaderboard.url`: the page to open.
public struct LeaderboardURLResult: MethodResult, Equatable {
    public var url: String

    public init(url: String) {
        self.url = url
    }

    public init?(json: JSONValue) {
        guard let url = json["url"]?.stringValue else { return nil }
        self.init(url: url)
    }

    public var json: JSONValue { ["url": .string(url)] }
}

/// `playback.start`, `playback.error` and `playback.foreground`: the screen state now (as
/// `playback.state` carries it) and, for the last two, whether a fresh ticket was requested.
public struct PlaybackResult: MethodResult, Equatable {
    public var screen: PlaybackStateEvent
    /// nil for `playback.start`.
    public var refreshing: Bool?

    public init(screen: PlaybackStateEvent, refreshing: Bool?) {
        self.screen = screen
        self.refreshing = refreshing
    }

    public init?(json: JSONValue) {
        guard let screen = PlaybackStateEvent(data: json) else { return nil }
        self.init(screen: screen, refreshing: json["refreshing"]?.boolValue)
    }

    public var json: JSONValue {
        var members = screen.data.objectValue ?? [:]
        members.setIfPresent("refreshing", refreshing.map(JSONValue.bool))
        return .object(members)
    }
}

/// `playback.stop`: `{stopped: true}`.
public struct PlaybackStopResult: MethodResult, Equatable {
    public var stopped: Bool

    public init(stopped: Bool = true) {
        self.stopped = stopped
    }

    public init?(json: JSONValue) {
        guard let stopped = json["stopped"]?.boolValue else { return nil }
        self.init(stopped: stopped)
    }

    public var json: JSONValue { ["stopped": .bool(stopped)] }
}
