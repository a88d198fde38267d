import JSONValue

/// An overlay on screen as `daemon.status` (and a subscription's snapshot) lists it.
public struct OverlayStatus: Sendable, Equatable {
    public var overlayId: String
    public var timelineId: String
    /// `minigame`, `predict` or `lucky`.
    public var kind: String
    public var url: String
    public var placement: OverlayPlacement
    public var durationSec: Int
    /// Whether the template said it is ready (the player shows it).
    public var revealed: Bool
    /// RFC 3339 with milliseconds.
    public var shownAt: String
    /// Whether the backend tracks it (live, with a tracking id).
    public var tracked: Bool

    public init(overlayId: String, timelineId: String, kind: String, url: String, placement: OverlayPlacement, durationSec: Int,
                revealed: Bool, shownAt: String, tracked: Bool) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.kind = kind
        self.url = url
        self.placement = placement
        self.durationSec = durationSec
        self.revealed = revealed
        self.shownAt = shownAt
        self.tracked = tracked
    }

    public init?(json: JSONValue) {
        guard let overlayId = json["overlayId"]?.stringValue, let timelineId = json["timelineId"]?.stringValue,
              let url = json["url"]?.stringValue, let placement = json["placement"].flatMap(OverlayPlacement.init(json:)) else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, kind: json["kind"]?.stringValue ?? "minigame", url: url,
                  placement: placement, durationSec: json["durationSec"]?.intValue ?? 0, revealed: json["revealed"]?.boolValue ?? false,
                  shownAt: json["shownAt"]?.stringValue ?? "", tracked: json["tracked"]?.boolValue ?? false)
    }

    public var json: JSONValue {
        ["overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": .string(kind), "url": .string(url),
         "placement": placement.json, "durationSec": .number(Double(durationSec)), "revealed": .bool(revealed),
         "shownAt": .string(shownAt), "tracked": .bool(tracked)]
    }
}

/// `daemon.status`, and the `snapshot` of `events.subscribe`: the sections a player draws from,
/// typed (the same types as the events that change them), and the whole status as sent in
/// `json` (`tracking`, `config`, `daemon`, `store` and `playback` are read from there).
public struct DaemonStatus: MethodResult, Equatable {
    public var bootId: String
    /// The backend connection (`connection.state`'s data).
    public var connection: ConnectionStateEvent?
    /// The room, nil when none was joined (`room.state`'s data).
    public var room: RoomStateEvent?
    /// The viewer (`session.state`'s data).
    public var session: SessionState?
    /// The overlays on screen.
    public var overlays: [OverlayStatus]
    /// The predict/lucky buttons (`predict.button`'s data).
    public var predict: [PredictButtonEvent]
    /// The status as the daemon sent it.
    public var json: JSONValue

    public init?(json: JSONValue) {
        guard let bootId = json["bootId"]?.stringValue else { return nil }
        self.bootId = bootId
        connection = json["connection"].flatMap(ConnectionStateEvent.init(data:))
        room = json["room"].flatMap(RoomStateEvent.init(data:))
        session = json["session"].flatMap(SessionState.init(json:))
        overlays = json["overlays"]?.arrayValue?.compactMap(OverlayStatus.init(json:)) ?? []
        predict = json["predict"]?.arrayValue?.compactMap(PredictButtonEvent.init(data:)) ?? []
        self.json = json
    }
}

extension SubscribeResult {
    /// The snapshot, typed.
    public var status: DaemonStatus? { DaemonStatus(json: snapshot) }
}
