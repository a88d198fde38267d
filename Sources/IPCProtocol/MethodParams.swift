import JSONValue

/// The typed `params` of a method: read (and checked) by the daemon, written by clients.
/// Reading refuses what the daemon refuses, with the same `-32602` messages (docs/ipc.md).
public protocol MethodParams: Sendable, Equatable {
    /// What the method returns.
    associatedtype Result: MethodResult
    /// The method these params belong to.
    static var method: IPCMethod { get }
    /// Reads and checks the params, in the order the daemon always checked them (the first bad
    /// member is the one the error names).
    init(_ params: ParamReader) throws(RPCError)
    /// The params as a client sends them; nil when there are none.
    var params: JSONValue? { get }
}

extension MethodParams {
    /// Reads and checks a request's `params` member.
    public init(params: JSONValue?) throws(RPCError) {
        try self.init(try ParamReader(params))
    }
}

/// A method without params (any given are ignored, once they are an object).
public protocol ParameterlessMethod: MethodParams {
    init()
}

extension ParameterlessMethod {
    public init(_ params: ParamReader) throws(RPCError) { self.init() }
    public var params: JSONValue? { nil }
}

/// `daemon.status`: the whole state.
public struct DaemonStatusParams: ParameterlessMethod {
    public typealias Result = DaemonStatus
    public static let method = IPCMethod.daemonStatus
    public init() {}
}

/// `daemon.reload`: re-read the configuration file.
public struct DaemonReloadParams: ParameterlessMethod {
    public typealias Result = ReloadResult
    public static let method = IPCMethod.daemonReload
    public init() {}
}

/// `session.logout`: back to an anonymous viewer.
public struct SessionLogoutParams: ParameterlessMethod {
    public typealias Result = SessionState
    public static let method = IPCMethod.sessionLogout
    public init() {}
}

/// `room.leave`.
public struct RoomLeaveParams: ParameterlessMethod {
    public typealias Result = RoomLeaveResult
    public static let method = IPCMethod.roomLeave
    public init() {}
}

/// `events.unsubscribe`.
public struct EventsUnsubscribeParams: ParameterlessMethod {
    public typealias Result = UnsubscribeResult
    public static let method = IPCMethod.eventsUnsubscribe
    public init() {}
}

/// `playback.stop`.
public struct PlaybackStopParams: ParameterlessMethod {
    public typealias Result = PlaybackStopResult
    public static let method = IPCMethod.playbackStop
    public init() {}
}

/// `daemon.hello`: `client` (a name for the logs) and `protocol` (the version the client speaks).
public struct HelloParams: MethodParams {
    public typealias Result = HelloResult
    public static let method = IPCMethod.daemonHello
    public var client: String?
    public var protocolVersion: Int?

    public init(client: String?, protocolVersion: Int? = ipcProtocolVersion) {
        self.client = client
        self.protocolVersion = protocolVersion
    }

    public init(_ params: ParamReader) throws(RPCError) {
        client = try params.optionalString("client")
        protocolVersion = try params.optionalInt("protocol", range: 0...Int(Int32.max))
    }

    public var params: JSONValue? {
        var members: JSONObject = [:]
        members.setIfPresent("client", client.map(JSONValue.string))
        members.setIfPresent("protocol", protocolVersion.map { .number(Double($0)) })
        return .object(members)
    }
}

/// `config.get`: with `origin`, every key is `{value, origin}` (and `pending` for a start-only key).
public struct ConfigGetParams: MethodParams {
    public typealias Result = JSONValue
    public static let method = IPCMethod.configGet
    public var origin: Bool

    public init(origin: Bool = false) {
        self.origin = origin
    }

    public init(_ params: ParamReader) throws(RPCError) {
        origin = try params.optionalBool("origin") == true
    }

    public var params: JSONValue? { origin ? ["origin": true] : nil }
}

/// `config.set`: a partial object of runtime keys; `null` drops a key's runtime value. The daemon
/// checks the keys and values against its key table.
public struct ConfigSetParams: MethodParams {
    public typealias Result = JSONValue
    public static let method = IPCMethod.configSet
    public var changes: JSONObject

    public init(changes: JSONObject) {
        self.changes = changes
    }

    public init(_ params: ParamReader) throws(RPCError) {
        guard !params.members.isEmpty else { throw RPCError.invalidParams("give at least one configuration key") }
        changes = params.members
    }

    public var params: JSONValue? { .object(changes) }
}

/// `session.login`: the viewer's token (a secret: never logged or returned), id and name.
public struct SessionLoginParams: MethodParams, CustomStringConvertible {
    public typealias Result = SessionState
    public static let method = IPCMethod.sessionLogin
    public var token: String
    public var userId: String
    public var displayName: String?

    public init(token: String, userId: String, displayName: String?) {
        self.token = token
        self.userId = userId
        self.displayName = displayName
    }

    public init(_ params: ParamReader) throws(RPCError) {
        token = try params.string("token")
        userId = try params.string("userId")
        displayName = try params.optionalString("displayName")
    }

    public var params: JSONValue? {
        var members: JSONObject = ["token": .string(token), "userId": .string(userId)]
        members.setIfPresent("displayName", displayName.map(JSONValue.string))
        return .object(members)
    }

    /// Without the token, so that printing the params never shows it.
    public var description: String { "session.login userId=\(userId)" }
}

/// `room.join`: the media, `live` or `vod`, the viewer's fanclub membership and, live only, how
/// long the reply waits for the server room.
public struct RoomJoinParams: MethodParams {
    public typealias Result = RoomJoinResult
    public static let method = IPCMethod.roomJoin
    /// How long a live `room.join` waits when `timeoutMs` is not given.
    public static let defaultTimeoutMs = 10_000

    public var mediaId: String
    public var mode: RoomMode
    public var fanclub: Bool
    /// nil: `defaultTimeoutMs`.
    public var timeoutMs: Int?

    public init(mediaId: String, mode: RoomMode = .live, fanclub: Bool = false, timeoutMs: Int? = nil) {
        self.mediaId = mediaId
        self.mode = mode
        self.fanclub = fanclub
        self.timeoutMs = timeoutMs
    }

    public init(_ params: ParamReader) throws(RPCError) {
        mediaId = try params.string("mediaId")
        mode = try params.oneOf("mode", RoomMode.self, default: .live)
        fanclub = try params.optionalBool("fanclub") ?? false
        timeoutMs = try params.optionalInt("timeoutMs", range: 0...600_000)
    }

    /// The wait in force: `timeoutMs`, else the default.
    public var effectiveTimeoutMs: Int { timeoutMs ?? Self.defaultTimeoutMs }

    public var params: JSONValue? {
        var members: JSONObject = ["mediaId": .string(mediaId), "mode": .string(mode.rawValue), "fanclub": .bool(fanclub)]
        members.setIfPresent("timeoutMs", timeoutMs.map { .number(Double($0)) })
        return .object(members)
    }
}

/// `player.time`: the playback position in seconds (≥ 0).
public struct PlayerTimeParams: MethodParams {
    public typealias Result = PlayerTimeResult
    public static let method = IPCMethod.playerTime
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    public init(_ params: ParamReader) throws(RPCError) {
        seconds = try params.number("seconds")
        guard seconds >= 0 else { throw RPCError.invalidParams("'seconds' must not be negative") }
    }

    public var params: JSONValue? { ["seconds": .number(seconds)] }
}

/// What the player is doing (`player.state` `state`).
public enum PlayerActivity: String, Sendable, CaseIterable {
    case playing, paused, buffering, ended
}

/// `player.state`: `state` and, optionally, the position in seconds.
public struct PlayerStateParams: MethodParams {
    public typealias Result = PlayerStateResult
    public static let method = IPCMethod.playerState
    public var state: PlayerActivity
    public var position: Double?

    public init(state: PlayerActivity, position: Double? = nil) {
        self.state = state
        self.position = position
    }

    public init(_ params: ParamReader) throws(RPCError) {
        state = try params.oneOf("state", PlayerActivity.self)
        position = try params.optionalNumber("position")
    }

    public var params: JSONValue? {
        var members: JSONObject = ["state": .string(state.rawValue)]
        members.setIfPresent("position", position.map(JSONValue.number))
        return .object(members)
    }
}

/// `player.viewport` params and result: the video area in pixels.
public struct Viewport: MethodParams, MethodResult {
    public typealias Result = Viewport
    public static let method = IPCMethod.playerViewport
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public init(_ params: ParamReader) throws(RPCError) {
        guard let width = try params.optionalInt("width", range: 1...100_000),
              let height = try params.optionalInt("height", range: 1...100_000) else {
            throw RPCError.invalidParams("'width' and 'height' are required")
        }
        self.init(width: width, height: height)
    }

    public init?(json: JSONValue) {
        guard let width = json["width"]?.intValue, let height = json["height"]?.intValue else { return nil }
        self.init(width: width, height: height)
    }

    public var json: JSONValue { ["width": .number(Double(width)), "height": .number(Double(height))] }
    public var params: JSONValue? { json }
}

/// `overlay.attached`: the player attached the overlay's web view. With `claim` false (tools
/// reporting on a player's behalf) the caller never becomes the overlay's owner.
public struct OverlayAttachedParams: MethodParams {
    public typealias Result = OKResult
    public static let method = IPCMethod.overlayAttached
    public var overlayId: String
    public var claim: Bool

    public init(overlayId: String, claim: Bool = true) {
        self.overlayId = overlayId
        self.claim = claim
    }

    public init(_ params: ParamReader) throws(RPCError) {
        overlayId = try params.string("overlayId")
        claim = try Self.claim(params)
    }

    public var params: JSONValue? { claimed(["overlayId": .string(overlayId)], claim) }

    /// `claim` is true unless it is given as false.
    static func claim(_ params: ParamReader) throws(RPCError) -> Bool {
        try params.optionalBool("claim") != false
    }
}

/// Adds `claim: false` when the caller does not claim the overlay.
private func claimed(_ members: JSONObject, _ claim: Bool) -> JSONValue {
    var members = members
    if !claim { members["claim"] = false }
    return .object(members)
}

/// How an overlay's page loaded (`overlay.rendered` `status`).
public enum RenderStatus: String, Sendable, CaseIterable {
    case loaded, failed
}

/// `overlay.rendered`: the page loaded or failed (`reason` says why).
public struct OverlayRenderedParams: MethodParams {
    public typealias Result = RenderedResult
    public static let method = IPCMethod.overlayRendered
    public var overlayId: String
    public var status: RenderStatus
    public var reason: String?
    public var claim: Bool

    public init(overlayId: String, status: RenderStatus, reason: String? = nil, claim: Bool = true) {
        self.overlayId = overlayId
        self.status = status
        self.reason = reason
        self.claim = claim
    }

    public init(_ params: ParamReader) throws(RPCError) {
        status = try params.oneOf("status", RenderStatus.self)
        overlayId = try params.string("overlayId")
        reason = try params.optionalString("reason")
        claim = try OverlayAttachedParams.claim(params)
    }

    public var params: JSONValue? {
        var members: JSONObject = ["overlayId": .string(overlayId), "status": .string(status.rawValue)]
        members.setIfPresent("reason", reason.map(JSONValue.string))
        return claimed(members, claim)
    }
}

/// `overlay.bridge`: what the web template posted, as the object `{type, data}` or the JSON text
/// it passed to `postMessage` (kept as sent in `message`).
public struct OverlayBridgeParams: MethodParams {
    public typealias Result = BridgeResult
    public static let method = IPCMethod.overlayBridge
    public var overlayId: String
    /// The message as the client sent it.
    public var message: JSONValue
    /// The message read: its `type` and `data`.
    public var posted: BridgeMessage
    public var claim: Bool

    /// nil when `message` is not `{type, data}` nor the JSON text of one.
    public init?(overlayId: String, message: JSONValue, claim: Bool = true) {
        guard let posted = BridgeMessage(message) else { return nil }
        self.overlayId = overlayId
        self.message = message
        self.posted = posted
        self.claim = claim
    }

    /// The message as the object `{type, data}`.
    public init(overlayId: String, posted: BridgeMessage, claim: Bool = true) {
        self.overlayId = overlayId
        message = posted.json
        self.posted = posted
        self.claim = claim
    }

    public init(_ params: ParamReader) throws(RPCError) {
        overlayId = try params.string("overlayId")
        guard let raw = params.members["message"], let posted = BridgeMessage(raw) else {
            throw RPCError.invalidParams("'message' must be {type, data} or the JSON string the template posted")
        }
        message = raw
        self.posted = posted
        claim = try OverlayAttachedParams.claim(params)
    }

    public var params: JSONValue? { claimed(["overlayId": .string(overlayId), "message": message], claim) }
}

/// The params of the methods that name one overlay and nothing else (`overlay.dismiss`).
public struct OverlayDismissParams: MethodParams {
    public typealias Result = OKResult
    public static let method = IPCMethod.overlayDismiss
    public var overlayId: String

    public init(overlayId: String) {
        self.overlayId = overlayId
    }

    public init(_ params: ParamReader) throws(RPCError) {
        overlayId = try params.string("overlayId")
    }

    public var params: JSONValue? { ["overlayId": .string(overlayId)] }
}

/// `answer.confirm`: the viewer's answer to the `answer.confirm` event (a bet deduction).
public struct AnswerConfirmParams: MethodParams {
    public typealias Result = OKResult
    public static let method = IPCMethod.answerConfirm
    public var overlayId: String
    public var accept: Bool

    public init(overlayId: String, accept: Bool) {
        self.overlayId = overlayId
        self.accept = accept
    }

    public init(_ params: ParamReader) throws(RPCError) {
        guard let accept = try params.optionalBool("accept") else { throw RPCError.invalidParams("'accept' is required") }
        self.accept = accept
        overlayId = try params.string("overlayId")
    }

    public var params: JSONValue? { ["overlayId": .string(overlayId), "accept": .bool(accept)] }
}

/// `predict.open`: the viewer tapped the predict/lucky button of a timeline.
public struct PredictOpenParams: MethodParams {
    public typealias Result = PredictOpenResult
    public static let method = IPCMethod.predictOpen
    public var timelineId: String

    public init(timelineId: String) {
        self.timelineId = timelineId
    }

    public init(_ params: ParamReader) throws(RPCError) {
        timelineId = try params.string("timelineId")
    }

    public var params: JSONValue? { ["timelineId": .string(timelineId)] }
}

/// `events.subscribe`: type prefixes (all when nil), and `since` (a seq) of `bootId` to replay
/// the held events after it.
public struct EventsSubscribeParams: MethodParams {
    public typealias Result = SubscribeResult
    public static let method = IPCMethod.eventsSubscribe
    public var types: [String]?
    public var since: Int?
    public var bootId: String?

    public init(types: [String]? = nil, since: Int? = nil, bootId: String? = nil) {
        self.types = types
        self.since = since
        self.bootId = bootId
    }

    public init(_ params: ParamReader) throws(RPCError) {
        types = try params.optionalStringArray("types")
        since = try params.optionalInt("since", range: 0...Int(Int32.max))
        bootId = try params.optionalString("bootId")
    }

    public var params: JSONValue? {
        var members: JSONObject = [:]
        members.setIfPresent("types", types.map { .array($0.map(JSONValue.string)) })
        members.setIfPresent("since", since.map { .number(Double($0)) })
        members.setIfPresent("bootId", bootId.map(JSONValue.string))
        return .object(members)
    }
}

/// `interactive.status`: the backend's interactive status of the logged-in viewer for a media.
public struct InteractiveStatusParams: MethodParams {
    public typealias Result = JSONValue
    public static let method = IPCMethod.interactiveStatus
    public var mediaId: String

    public init(mediaId: String) {
        self.mediaId = mediaId
    }

    public init(_ params: ParamReader) throws(RPCError) {
        mediaId = try params.string("mediaId")
    }

    public var params: JSONValue? { ["mediaId": .string(mediaId)] }
}

/// `leaderboard.url`: the leaderboard page of a media.
public struct LeaderboardURLParams: MethodParams {
    public typealias Result = LeaderboardURLResult
    public static let method = IPCMethod.leaderboardURL
    public var mediaId: String

    public init(mediaId: String) {
        self.mediaId = mediaId
    }

    public init(_ params: ParamReader) throws(RPCError) {
        mediaId = try params.string("mediaId")
    }

    public var params: JSONValue? { ["mediaId": .string(mediaId)] }
}

/// The SDK's device values in `playback.start` (a missing or non-string value counts as unusable,
/// which the daemon decides and reports as `interactive.InvalidDeviceValues`).
public struct PlaybackDevice: Sendable, Equatable {
    public var unionInfo: String?
    public var drmKek: String?

    public init(unionInfo: String?, drmKek: String?) {
        self.unionInfo = unionInfo
        self.drmKek = drmKek
    }
}

/// `playback.start`: a film's episode, with the SDK's device values.
public struct PlaybackStartParams: MethodParams {
    public typealias Result = PlaybackResult
    public static let method = IPCMethod.playbackStart
    public var filmId: String
    public var episodeNo: Int
    public var device: PlaybackDevice

    public init(filmId: String, episodeNo: Int, device: PlaybackDevice) {
        self.filmId = filmId
        self.episodeNo = episodeNo
        self.device = device
    }

    public init(_ params: ParamReader) throws(RPCError) {
        filmId = try params.string("filmId")
        guard let episodeNo = try params.optionalInt("episodeNo", range: 1...Int(Int32.max)) else {
            throw RPCError.invalidParams("'episodeNo' is required")
        }
        self.episodeNo = episodeNo
        guard let device = params.members["device"], device.objectValue != nil else {
            throw RPCError.invalidParams("'device' must be {unionInfo, drmKek}")
        }
        self.device = PlaybackDevice(unionInfo: device["unionInfo"]?.stringValue, drmKek: device["drmKek"]?.stringValue)
    }

    public var params: JSONValue? {
        var device: JSONObject = [:]
        device.setIfPresent("unionInfo", self.device.unionInfo.map(JSONValue.string))
        device.setIfPresent("drmKek", self.device.drmKek.map(JSONValue.string))
        return ["filmId": .string(filmId), "episodeNo": .number(Double(episodeNo)), "device": .object(device)]
    }
}

/// `playback.error`: the SDK's error at `position` seconds (≥ 0), with its text (never branched on).
public struct PlaybackErrorParams: MethodParams {
    public typealias Result = PlaybackResult
    public static let method = IPCMethod.playbackError
    public var position: Double
    public var message: String?

    public init(position: Double, message: String? = nil) {
        self.position = position
        self.message = message
    }

    public init(_ params: ParamReader) throws(RPCError) {
        position = try PlaybackForegroundParams.position(params)
        message = params.members["message"]?.stringValue
    }

    public var params: JSONValue? {
        var members: JSONObject = ["position": .number(position)]
        members.setIfPresent("message", message.map(JSONValue.string))
        return .object(members)
    }
}

/// `playback.foreground`: the player is back from standby at `position` seconds (≥ 0).
public struct PlaybackForegroundParams: MethodParams {
    public typealias Result = PlaybackResult
    public static let method = IPCMethod.playbackForeground
    public var position: Double

    public init(position: Double) {
        self.position = position
    }

    public init(_ params: ParamReader) throws(RPCError) {
        position = try Self.position(params)
    }

    public var params: JSONValue? { ["position": .number(position)] }

    /// A player's `position` in seconds (≥ 0).
    static func position(_ params: ParamReader) throws(RPCError) -> Double {
        let seconds = try params.number("position")
        guard seconds >= 0 else { throw RPCError.invalidParams("'position' must not be negative") }
        return seconds
    }
}
