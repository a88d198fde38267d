import JSONValue

/// The typed `data` of an event (docs/ipc.md, Events): published by the daemon, read by
/// clients from `EventEnvelope.data`. `data` is exactly what the daemon sends
/// (`IPCProtocolTests/WireFormatTests` pin it).
public protocol EventData: Sendable, Equatable {
    /// The event's `type`.
    static var type: String { get }
    /// nil when a member the protocol guarantees is missing.
    init?(data: JSONValue)
    var data: JSONValue { get }
    /// Appends `data`'s JSON text, the bytes `data.serialized()` makes (keys in order). Events
    /// of the display path write it directly, without building `data` (`OverlayShow` relays
    /// its `rawText` where `data` has `raw`).
    func writeData(to out: inout [UInt8])
}

extension EventData {
    public func writeData(to out: inout [UInt8]) { data.write(to: &out) }
}

extension EventEnvelope {
    /// The typed data, when this event is of `Data`'s type and its data reads.
    public func decode<Data: EventData>(_: Data.Type) -> Data? {
        type == Data.type ? Data(data: data) : nil
    }
}

/// `session.state` carries `SessionState`.
extension SessionState: EventData {
    public static let type = EventType.sessionState
    public init?(data: JSONValue) { self.init(json: data) }
    public var data: JSONValue { json }
}

/// `connection.state`: the backend connection.
public struct ConnectionStateEvent: EventData {
    public static let type = EventType.connectionState
    /// `idle`, `connecting`, `connected`, `reconnecting` or `disconnected`.
    public var state: String
    public var attempt: Int
    public var retryInMs: Int?
    public var error: String?
    /// Only when connected.
    public var socketId: String?

    public init(state: String, attempt: Int = 0, retryInMs: Int? = nil, error: String? = nil, socketId: String? = nil) {
        self.state = state
        self.attempt = attempt
        self.retryInMs = retryInMs
        self.error = error
        self.socketId = socketId
    }

    public init?(data: JSONValue) {
        guard let state = data["state"]?.stringValue else { return nil }
        self.init(state: state, attempt: data["attempt"]?.intValue ?? 0, retryInMs: data["retryInMs"]?.intValue,
                  error: data["error"]?.stringValue, socketId: data["socketId"]?.stringValue)
    }

    public var data: JSONValue {
        var members: JSONObject = [
            "state": .string(state), "attempt": .number(Double(attempt)), "retryInMs": JSONValue(retryInMs), "error": JSONValue(error),
        ]
        members.setIfPresent("socketId", socketId.map(JSONValue.string))
        return .object(members)
    }
}

/// `room.state`: the room, and the error that stopped it (`{name, message}`).
public struct RoomStateEvent: EventData {
    public static let type = EventType.roomState

    /// Why a room is in `error`.
    public struct Failure: Sendable, Equatable {
        /// The daemon error's name (`interactive.BackendRefused`, …).
        public var name: String?
        public var message: String

        public init(name: String?, message: String) {
            self.name = name
            self.message = message
        }
    }

    public var mediaId: String
    public var mode: RoomMode
    /// `joining`, `joined`, `left` or `error`.
    public var state: String
    public var fanclub: Bool
    public var error: Failure?

    public init(mediaId: String, mode: RoomMode, state: String, fanclub: Bool, error: Failure?) {
        self.mediaId = mediaId
        self.mode = mode
        self.state = state
        self.fanclub = fanclub
        self.error = error
    }

    public init?(data: JSONValue) {
        guard let mediaId = data["mediaId"]?.stringValue, let mode = data["mode"]?.stringValue.flatMap(RoomMode.init(rawValue:)),
              let state = data["state"]?.stringValue else { return nil }
        let error = data["error"].flatMap { error in
            error["message"]?.stringValue.map { Failure(name: error["name"]?.stringValue, message: $0) }
        }
        self.init(mediaId: mediaId, mode: mode, state: state, fanclub: data["fanclub"]?.boolValue ?? false, error: error)
    }

    public var data: JSONValue {
        let failure: JSONValue = error.map { ["name": JSONValue($0.name), "message": .string($0.message)] } ?? .null
        return ["mediaId": .string(mediaId), "mode": .string(mode.rawValue), "state": .string(state), "fanclub": .bool(fanclub),
                "error": failure]
    }
}

/// `config.changed`: the keys that changed, with their new values.
public struct ConfigChangedEvent: EventData {
    public static let type = EventType.configChanged
    public var changes: JSONObject

    public init(changes: JSONObject) {
        self.changes = changes
    }

    public init?(data: JSONValue) {
        guard let changes = data.objectValue else { return nil }
        self.init(changes: changes)
    }

    public var data: JSONValue { .object(changes) }
}

/// `overlay.reveal`: the template is ready; show the overlay now.
public struct OverlayRevealEvent: EventData {
    public static let type = EventType.overlayReveal
    public var overlayId: String

    public init(overlayId: String) {
        self.overlayId = overlayId
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue else { return nil }
        self.init(overlayId: overlayId)
    }

    public var data: JSONValue { ["overlayId": .string(overlayId)] }
}

/// `overlay.hide`: the overlay leaves the screen, and why (`replaced_by_new_overlay`, `recalled`,
/// `remove_all_view`, `interactive_hide`, `dismissed`, `expired`, `player_disconnected`).
public struct OverlayHideEvent: EventData {
    public static let type = EventType.overlayHide
    public var overlayId: String
    public var timelineId: String
    public var reason: String

    public init(overlayId: String, timelineId: String, reason: String) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.reason = reason
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let timelineId = data["timelineId"]?.stringValue,
              let reason = data["reason"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, reason: reason)
    }

    public var data: JSONValue { ["overlayId": .string(overlayId), "timelineId": .string(timelineId), "reason": .string(reason)] }

    public func writeData(to out: inout [UInt8]) {
        JSONWriter.append(to: &out) { writer in
            writer.beginObject()
            writer.member("overlayId", overlayId)
            writer.member("reason", reason)
            writer.member("timelineId", timelineId)
            writer.endObject()
        }
    }
}

/// `overlay.post`: post `{key, data}` into the overlay's page (`window.postMessage`).
public struct OverlayPostEvent: EventData {
    public static let type = EventType.overlayPost
    public var overlayId: String
    /// `UPDATE_DATA_INTERACTIVE`, `UPDATE_COUTER`, `UPDATE_NUMBER_LUCKY` or `UPDATE_CONFIRM`.
    public var key: String
    public var messageData: JSONValue

    public init(overlayId: String, key: String, data: JSONValue) {
        self.overlayId = overlayId
        self.key = key
        messageData = data
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let key = data["message"]?["key"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, key: key, data: data["message"]?["data"] ?? .null)
    }

    /// What to post into the page.
    public var message: JSONValue { ["key": .string(key), "data": messageData] }

    public var data: JSONValue { ["overlayId": .string(overlayId), "message": message] }
}

/// `overlay.link`: the viewer clicked an ad (never an answer): open `url` when `loadable`, else
/// show it (a link a web view cannot open, such as `intent://`, as a QR code).
public struct OverlayLinkEvent: EventData {
    public static let type = EventType.overlayLink
    public var overlayId: String
    public var url: String
    public var loadable: Bool

    public init(overlayId: String, url: String, loadable: Bool = true) {
        self.overlayId = overlayId
        self.url = url
        self.loadable = loadable
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let url = data["url"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, url: url, loadable: data["loadable"]?.boolValue ?? true)
    }

    public var data: JSONValue { ["overlayId": .string(overlayId), "url": .string(url), "loadable": .bool(loadable)] }
}

/// `player.controls`: show or hide the player's own controls.
public struct PlayerControlsEvent: EventData {
    public static let type = EventType.playerControls
    public var visible: Bool

    public init(visible: Bool) {
        self.visible = visible
    }

    public init?(data: JSONValue) {
        guard let visible = data["visible"]?.boolValue else { return nil }
        self.init(visible: visible)
    }

    public var data: JSONValue { ["visible": .bool(visible)] }
}

/// `login.required`: the viewer must log in to go on (`reason` `answer`).
public struct LoginRequiredEvent: EventData {
    public static let type = EventType.loginRequired
    /// The overlay whose answer needs a login; nil for `expired`.
    public var overlayId: String?
    /// `answer` (an answer needs a login) or `expired` (the backend refused the viewer's token).
    public var reason: String

    public init(overlayId: String, reason: String = "answer") {
        self.overlayId = overlayId
        self.reason = reason
    }

    /// The session expired: the viewer must log in again.
    public static var expired: LoginRequiredEvent {
        var event = LoginRequiredEvent(overlayId: "", reason: "expired")
        event.overlayId = nil
        return event
    }

    public init?(data: JSONValue) {
        guard let reason = data["reason"]?.stringValue else { return nil }
        if let overlayId = data["overlayId"]?.stringValue {
            self.init(overlayId: overlayId, reason: reason)
        } else {
            guard reason == "expired" else { return nil }
            self = .expired
        }
    }

    public var data: JSONValue {
        guard let overlayId else { return ["reason": .string(reason)] }
        return ["overlayId": .string(overlayId), "reason": .string(reason)]
    }
}

/// `fanclub.required`: the overlay is for the media's fanclub.
public struct FanclubRequiredEvent: EventData {
    public static let type = EventType.fanclubRequired
    public var overlayId: String
    public var mediaId: String

    public init(overlayId: String, mediaId: String) {
        self.overlayId = overlayId
        self.mediaId = mediaId
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let mediaId = data["mediaId"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, mediaId: mediaId)
    }

    public var data: JSONValue { ["overlayId": .string(overlayId), "mediaId": .string(mediaId)] }
}

/// `answer.confirm` (the event): ask the viewer to confirm a bet, reply with the
/// `answer.confirm` method within `timeoutMs`.
public struct AnswerConfirmEvent: EventData {
    public static let type = EventType.answerConfirm
    public var overlayId: String
    public var timelineId: String
    /// `bet`.
    public var kind: String
    public var amount: Double
    public var vip: Bool
    public var bet: Bool
    public var timeoutMs: Int

    public init(overlayId: String, timelineId: String, kind: String = "bet", amount: Double, vip: Bool, bet: Bool, timeoutMs: Int) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.kind = kind
        self.amount = amount
        self.vip = vip
        self.bet = bet
        self.timeoutMs = timeoutMs
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let timelineId = data["timelineId"]?.stringValue,
              let amount = data["amount"]?.doubleValue, let timeoutMs = data["timeoutMs"]?.intValue else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, kind: data["kind"]?.stringValue ?? "bet", amount: amount,
                  vip: data["vip"]?.boolValue ?? false, bet: data["bet"]?.boolValue ?? false, timeoutMs: timeoutMs)
    }

    public var data: JSONValue {
        ["overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": .string(kind), "amount": .number(amount),
         "vip": .bool(vip), "bet": .bool(bet), "timeoutMs": .number(Double(timeoutMs))]
    }
}

/// `answer.result`: how an answer attempt ended. A success carries the backend's `data` (and
/// `reason: null`); a failure its `reason` and, for a bet nobody confirmed, `detail: "timeout"`.
public struct AnswerResultEvent: EventData {
    public static let type = EventType.answerResult
    public var overlayId: String
    public var timelineId: String
    /// `success` or `failure`.
    public var status: String
    public var reason: String?
    public var detail: String?
    /// The backend's `data`, on success.
    public var result: JSONValue?

    public init(overlayId: String, timelineId: String, status: String, reason: String?, detail: String? = nil, result: JSONValue? = nil) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.status = status
        self.reason = reason
        self.detail = detail
        self.result = result
    }

    /// A success with the backend's `data`.
    public static func success(overlayId: String, timelineId: String, data: JSONValue) -> AnswerResultEvent {
        AnswerResultEvent(overlayId: overlayId, timelineId: timelineId, status: "success", reason: nil, result: data)
    }

    /// A failure with its reason.
    public static func failure(overlayId: String, timelineId: String, reason: String, detail: String?) -> AnswerResultEvent {
        AnswerResultEvent(overlayId: overlayId, timelineId: timelineId, status: "failure", reason: reason, detail: detail)
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let timelineId = data["timelineId"]?.stringValue,
              let status = data["status"]?.stringValue else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, status: status, reason: data["reason"]?.stringValue,
                  detail: data["detail"]?.stringValue, result: data["data"])
    }

    public var data: JSONValue {
        var members: JSONObject = ["overlayId": .string(overlayId), "timelineId": .string(timelineId),
                                            "status": .string(status), "reason": JSONValue(reason)]
        members.setIfPresent("detail", detail.map(JSONValue.string))
        members.setIfPresent("data", result)
        return .object(members)
    }
}

/// `predict.button`: the floating predict/lucky button of a timeline.
public struct PredictButtonEvent: EventData {
    public static let type = EventType.predictButton
    public var timelineId: String
    /// `predict` or `lucky`.
    public var kind: String
    public var visible: Bool
    /// `idle` or `power`.
    public var image: String
    public var imageIdle: String?
    public var imagePower: String?
    public var opacity: Double

    public init(timelineId: String, kind: String, visible: Bool, image: String, imageIdle: String?, imagePower: String?,
                opacity: Double) {
        self.timelineId = timelineId
        self.kind = kind
        self.visible = visible
        self.image = image
        self.imageIdle = imageIdle
        self.imagePower = imagePower
        self.opacity = opacity
    }

    public init?(data: JSONValue) {
        guard let timelineId = data["timelineId"]?.stringValue, let kind = data["kind"]?.stringValue,
              let visible = data["visible"]?.boolValue, let image = data["image"]?.stringValue else { return nil }
        self.init(timelineId: timelineId, kind: kind, visible: visible, image: image, imageIdle: data["imageIdle"]?.stringValue,
                  imagePower: data["imagePower"]?.stringValue, opacity: data["opacity"]?.doubleValue ?? 1)
    }

    public var data: JSONValue {
        ["timelineId": .string(timelineId), "kind": .string(kind), "visible": .bool(visible), "image": .string(image),
         "imageIdle": JSONValue(imageIdle), "imagePower": JSONValue(imagePower), "opacity": .number(opacity)]
    }
}

/// `events.lagged`: this many events were lost where it stands.
public struct EventsLaggedEvent: EventData {
    public static let type = EventType.eventsLagged
    public var missed: Int

    public init(missed: Int) {
        self.missed = missed
    }

    public init?(data: JSONValue) {
        guard let missed = data["missed"]?.intValue else { return nil }
        self.init(missed: missed)
    }

    public var data: JSONValue { ["missed": .number(Double(missed))] }
}
