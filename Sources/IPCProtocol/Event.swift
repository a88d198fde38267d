import JSONValue

/// The notification method that carries every daemon event.
public let eventNotificationMethod = "event"

/// One daemon event as subscribers receive it
/// (`{"jsonrpc":"2.0","method":"event","params":{bootId, seq, type, time, data}}`).
public struct EventEnvelope: Sendable, Equatable {
    public var bootId: String
    /// Rises by one per event within a boot; `events.lagged` carries none.
    public var seq: Int?
    public var type: String
    /// RFC 3339 time with milliseconds.
    public var time: String
    public var data: JSONValue

    public init(bootId: String, seq: Int?, type: String, time: String, data: JSONValue) {
        self.bootId = bootId
        self.seq = seq
        self.type = type
        self.time = time
        self.data = data
    }

    public var params: JSONValue {
        var members: JSONObject = [
            "bootId": .string(bootId), "type": .string(type), "time": .string(time), "data": data,
        ]
        if let seq { members["seq"] = .number(Double(seq)) }
        return .object(members)
    }

    /// The notification as one JSON line, newline included: the same bytes as
    /// `RPCRequest(id: nil, method: "event", params: params).line()`, written directly (keys in
    /// order) because every event is encoded on the daemon's hot path.
    public func line() -> [UInt8] {
        Self.line(bootId: bootId, seq: seq, type: type, time: time, writingData: data.write)
    }

    /// The line of an envelope whose data `writeData` appends as JSON text (an `EventData`'s
    /// `writeData`): the bytes `line()` makes, without the data built as a `JSONValue`.
    public static func line(bootId: String, seq: Int?, type: String, time: String,
                            writingData writeData: (inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(192)
        out.append(contentsOf: #"{"jsonrpc":"2.0","method":"event","params":{"bootId":"#.utf8)
        JSONValue.writeString(bootId, to: &out)
        out.append(contentsOf: #","data":"#.utf8)
        writeData(&out)
        if let seq {
            out.append(contentsOf: #","seq":"#.utf8)
            JSONValue.writeInteger(Int64(seq), to: &out)
        }
        out.append(contentsOf: #","time":"#.utf8)
        JSONValue.writeString(time, to: &out)
        out.append(contentsOf: #","type":"#.utf8)
        JSONValue.writeString(type, to: &out)
        out.append(contentsOf: "}}\n".utf8)
        return out
    }

    /// Reads an envelope from a notification's params.
    public init?(params: JSONValue?) {
        guard let params, let bootId = params["bootId"]?.stringValue, let type = params["type"]?.stringValue else {
            return nil
        }
        self.init(bootId: bootId, seq: params["seq"]?.intValue, type: type,
                  time: params["time"]?.stringValue ?? "", data: params["data"] ?? .null)
    }
}

/// Event type names of protocol 1.
public enum EventType {
    public static let connectionState = "connection.state"
    public static let roomState = "room.state"
    public static let sessionState = "session.state"
    public static let configChanged = "config.changed"
    public static let overlayShow = "overlay.show"
    public static let overlayReveal = "overlay.reveal"
    public static let overlayHide = "overlay.hide"
    public static let overlayPost = "overlay.post"
    public static let overlayLink = "overlay.link"
    public static let playerControls = "player.controls"
    public static let loginRequired = "login.required"
    public static let fanclubRequired = "fanclub.required"
    public static let answerConfirm = "answer.confirm"
    public static let answerResult = "answer.result"
    public static let predictButton = "predict.button"
    public static let eventsLagged = "events.lagged"
    public static let playbackState = "playback.state"
    public static let playbackPlay = "playback.play"
    public static let playbackPreload = "playback.preload"
}
