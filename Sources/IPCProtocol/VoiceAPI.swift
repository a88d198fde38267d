import JSONValue

// The voice room of seed 002 (docs/ipc.md, Voice rooms): `voice.join`, `voice.leave`,
// `voice.mute`, the events `voice.state`, `voice.peer`, `voice.talking` and `daemon.status`'s
// `voice`.

/// How far a voice room got (`voice.state` `state`).
public enum VoiceState: String, Sendable, CaseIterable {
    case connecting, joined, reconnecting, left, closed, error

    /// Whether the daemon is in the room or on its way there (not left, closed or failed).
    public var isActive: Bool { self == .connecting || self == .joined || self == .reconnecting }
}

/// Why this box is out of the room (`voice.state` `reason`): `left`, `kicked` and `replaced`
/// (another `voice.join`) with `left`; `destroyed` with `closed`.
public enum VoiceStateReason: String, Sendable, CaseIterable {
    case left, kicked, replaced, destroyed
}

/// What happened to another participant (`voice.peer` `event`).
public enum VoicePeerChange: String, Sendable, CaseIterable {
    case joined, left, updated
}

/// Why a participant left (`voice.peer` `reason`): it left, it was kicked, its session timed out,
/// or it was found gone when the list was read again after a reconnection (`disconnected`).
public enum VoicePeerLeftReason: String, Sendable, CaseIterable {
    case left, kicked, timeout, disconnected
}

/// One participant of the room, this box included (its `peerId` is the room's `selfId`).
public struct VoiceParticipant: Sendable, Equatable {
    public var peerId: String
    public var display: String?
    public var muted: Bool
    public var talking: Bool

    public init(peerId: String, display: String?, muted: Bool, talking: Bool) {
        self.peerId = peerId
        self.display = display
        self.muted = muted
        self.talking = talking
    }

    public init?(json: JSONValue) {
        guard let peerId = json["peerId"]?.stringValue else { return nil }
        self.init(peerId: peerId, display: json["display"]?.stringValue, muted: json["muted"]?.boolValue ?? false,
                  talking: json["talking"]?.boolValue ?? false)
    }

    public var json: JSONValue {
        ["peerId": .string(peerId), "display": JSONValue(display), "muted": .bool(muted), "talking": .bool(talking)]
    }
}

/// The voice room as `daemon.status` (and a subscription's snapshot) shows it, and the result of
/// `voice.join`: `joined` with `selfId` and `participants` (this box first), or `connecting` /
/// `reconnecting` when `timeoutMs` passed first, or `left` when another call took its place.
public struct VoiceStatus: MethodResult, Equatable {
    public var room: String
    public var state: VoiceState
    public var selfId: String?
    public var muted: Bool
    public var participants: [VoiceParticipant]
    /// Why the room is in `error`.
    public var error: RoomStateEvent.Failure?

    public init(room: String, state: VoiceState, selfId: String?, muted: Bool, participants: [VoiceParticipant],
                error: RoomStateEvent.Failure? = nil) {
        self.room = room
        self.state = state
        self.selfId = selfId
        self.muted = muted
        self.participants = participants
        self.error = error
    }

    public init?(json: JSONValue) {
        guard let room = json["room"]?.stringValue, let state = json["state"]?.stringValue.flatMap(VoiceState.init(rawValue:))
        else { return nil }
        self.init(room: room, state: state, selfId: json["selfId"]?.stringValue, muted: json["muted"]?.boolValue ?? false,
                  participants: json["participants"]?.arrayValue?.compactMap(VoiceParticipant.init(json:)) ?? [],
                  error: json["error"].flatMap(RoomStateEvent.Failure.init(json:)))
    }

    public var json: JSONValue {
        ["room": .string(room), "state": .string(state.rawValue), "selfId": JSONValue(selfId), "muted": .bool(muted),
         "participants": .array(participants.map(\.json)), "error": error?.json ?? .null]
    }
}

extension RoomStateEvent.Failure {
    /// `{name, message}`; nil without a message.
    public init?(json: JSONValue) {
        guard let message = json["message"]?.stringValue else { return nil }
        self.init(name: json["name"]?.stringValue, message: message)
    }

    public var json: JSONValue { ["name": JSONValue(name), "message": .string(message)] }
}

/// `voice.join`: the room (1–64 printable characters), the name others see (1–64 printable
/// characters; default the viewer's `displayName`, else `Viewer`), whether to start muted, the
/// room's pin (a secret: never logged, never printed) and how long the reply waits.
public struct VoiceJoinParams: MethodParams, CustomStringConvertible {
    public typealias Result = VoiceStatus
    public static let method = IPCMethod.voiceJoin
    /// How long `voice.join` waits when `timeoutMs` is not given.
    public static let defaultTimeoutMs = 10_000
    /// The longest room name and display name, in characters.
    public static let maxNameLength = 64
    /// The longest pin, in bytes.
    public static let maxPinBytes = 256

    public var room: String
    public var display: String?
    public var muted: Bool
    public var pin: String?
    /// nil: `defaultTimeoutMs`.
    public var timeoutMs: Int?

    public init(room: String, display: String? = nil, muted: Bool = false, pin: String? = nil, timeoutMs: Int? = nil) {
        self.room = room
        self.display = display
        self.muted = muted
        self.pin = pin
        self.timeoutMs = timeoutMs
    }

    public init(_ params: ParamReader) throws(RPCError) {
        room = try Self.name("room", params.string("room"))
        if let display = try params.optionalString("display") {
            self.display = try Self.name("display", display)
        } else {
            display = nil
        }
        muted = try params.optionalBool("muted") ?? false
        pin = try params.optionalString("pin")
        if let pin, pin.utf8.count > Self.maxPinBytes {
            throw RPCError.invalidParams("'pin' must be at most \(Self.maxPinBytes) bytes")
        }
        timeoutMs = try params.optionalInt("timeoutMs", range: 0...600_000)
    }

    /// The wait in force: `timeoutMs`, else the default.
    public var effectiveTimeoutMs: Int { timeoutMs ?? Self.defaultTimeoutMs }

    public var params: JSONValue? {
        var members: JSONObject = ["room": .string(room), "muted": .bool(muted)]
        members.setIfPresent("display", display.map(JSONValue.string))
        members.setIfPresent("pin", pin.map(JSONValue.string))
        members.setIfPresent("timeoutMs", timeoutMs.map { .number(Double($0)) })
        return .object(members)
    }

    /// Without the pin, so that printing the params never shows it.
    public var description: String {
        "voice.join room=\(room) muted=\(muted)\(pin == nil ? "" : " pin=(set)")"
    }

    /// A name of 1 to `maxNameLength` characters (control characters were refused on reading).
    private static func name(_ member: String, _ text: String) throws(RPCError) -> String {
        guard text.count <= maxNameLength else {
            throw RPCError.invalidParams("'\(member)' must be 1 to \(maxNameLength) printable characters")
        }
        return text
    }
}

/// `voice.leave`.
public struct VoiceLeaveParams: ParameterlessMethod {
    public typealias Result = VoiceLeaveResult
    public static let method = IPCMethod.voiceLeave
    public init() {}
}

/// `voice.leave`: `{room, state: "left"}`.
public struct VoiceLeaveResult: MethodResult, Equatable {
    public var room: String
    public var state: VoiceState

    public init(room: String, state: VoiceState = .left) {
        self.room = room
        self.state = state
    }

    public init?(json: JSONValue) {
        guard let room = json["room"]?.stringValue, let state = json["state"]?.stringValue.flatMap(VoiceState.init(rawValue:))
        else { return nil }
        self.init(room: room, state: state)
    }

    public var json: JSONValue { ["room": .string(room), "state": .string(state.rawValue)] }
}

/// `voice.mute`: muted, the server is told (others see it) and nothing leaves the box.
public struct VoiceMuteParams: MethodParams {
    public typealias Result = VoiceMuteResult
    public static let method = IPCMethod.voiceMute
    public var muted: Bool

    public init(muted: Bool) {
        self.muted = muted
    }

    public init(_ params: ParamReader) throws(RPCError) {
        guard let muted = try params.optionalBool("muted") else { throw RPCError.invalidParams("'muted' is required") }
        self.muted = muted
    }

    public var params: JSONValue? { ["muted": .bool(muted)] }
}

/// `voice.mute`: `{room, muted}`, the mute state now in force.
public struct VoiceMuteResult: MethodResult, Equatable {
    public var room: String
    public var muted: Bool

    public init(room: String, muted: Bool) {
        self.room = room
        self.muted = muted
    }

    public init?(json: JSONValue) {
        guard let room = json["room"]?.stringValue, let muted = json["muted"]?.boolValue else { return nil }
        self.init(room: room, muted: muted)
    }

    public var json: JSONValue { ["room": .string(room), "muted": .bool(muted)] }
}

/// `voice.state`: the room's state. `participants` is the count (this box included) when the
/// state changed; `voice.peer` tells each change after it.
public struct VoiceStateEvent: EventData {
    public static let type = EventType.voiceState
    public var room: String
    public var state: VoiceState
    public var selfId: String?
    public var muted: Bool
    public var participants: Int
    public var error: RoomStateEvent.Failure?
    public var reason: VoiceStateReason?

    public init(room: String, state: VoiceState, selfId: String?, muted: Bool, participants: Int,
                error: RoomStateEvent.Failure? = nil, reason: VoiceStateReason? = nil) {
        self.room = room
        self.state = state
        self.selfId = selfId
        self.muted = muted
        self.participants = participants
        self.error = error
        self.reason = reason
    }

    public init?(data: JSONValue) {
        guard let room = data["room"]?.stringValue, let state = data["state"]?.stringValue.flatMap(VoiceState.init(rawValue:))
        else { return nil }
        self.init(room: room, state: state, selfId: data["selfId"]?.stringValue, muted: data["muted"]?.boolValue ?? false,
                  participants: data["participants"]?.intValue ?? 0, error: data["error"].flatMap(RoomStateEvent.Failure.init(json:)),
                  reason: data["reason"]?.stringValue.flatMap(VoiceStateReason.init(rawValue:)))
    }

    public var data: JSONValue {
        ["room": .string(room), "state": .string(state.rawValue), "selfId": JSONValue(selfId), "muted": .bool(muted),
         "participants": .number(Double(participants)), "error": error?.json ?? .null, "reason": JSONValue(reason?.rawValue)]
    }
}

/// `voice.peer`: another participant joined, left or changed (its `muted` or `display`).
public struct VoicePeerEvent: EventData {
    public static let type = EventType.voicePeer
    public var room: String
    public var peerId: String
    public var display: String?
    public var event: VoicePeerChange
    public var muted: Bool
    /// Only with `left`.
    public var reason: VoicePeerLeftReason?

    public init(room: String, peerId: String, display: String?, event: VoicePeerChange, muted: Bool,
                reason: VoicePeerLeftReason? = nil) {
        self.room = room
        self.peerId = peerId
        self.display = display
        self.event = event
        self.muted = muted
        self.reason = reason
    }

    public init?(data: JSONValue) {
        guard let room = data["room"]?.stringValue, let peerId = data["peerId"]?.stringValue,
              let event = data["event"]?.stringValue.flatMap(VoicePeerChange.init(rawValue:)) else { return nil }
        self.init(room: room, peerId: peerId, display: data["display"]?.stringValue, event: event,
                  muted: data["muted"]?.boolValue ?? false,
                  reason: data["reason"]?.stringValue.flatMap(VoicePeerLeftReason.init(rawValue:)))
    }

    public var data: JSONValue {
        ["room": .string(room), "peerId": .string(peerId), "display": JSONValue(display), "event": .string(event.rawValue),
         "muted": .bool(muted), "reason": JSONValue(reason?.rawValue)]
    }
}

/// `voice.talking`: a participant (this box too, by its `selfId`) started or stopped talking; a
/// player may lower the programme's volume while anyone talks.
public struct VoiceTalkingEvent: EventData {
    public static let type = EventType.voiceTalking
    public var room: String
    public var peerId: String
    public var talking: Bool

    public init(room: String, peerId: String, talking: Bool) {
        self.room = room
        self.peerId = peerId
        self.talking = talking
    }

    public init?(data: JSONValue) {
        guard let room = data["room"]?.stringValue, let peerId = data["peerId"]?.stringValue,
              let talking = data["talking"]?.boolValue else { return nil }
        self.init(room: room, peerId: peerId, talking: talking)
    }

    public var data: JSONValue { ["room": .string(room), "peerId": .string(peerId), "talking": .bool(talking)] }
}

extension EventType {
    public static let voiceState = "voice.state"
    public static let voicePeer = "voice.peer"
    public static let voiceTalking = "voice.talking"
}

extension DaemonStatus {
    /// The voice room (`voice`), nil when no `voice.join` was made since the daemon started.
    public var voice: VoiceStatus? { json["voice"].flatMap(VoiceStatus.init(json:)) }
}
