import JSONValue

/// A participant as the AudioBridge lists it. `id` is the server's number as decimal text, or
/// its string (`string_ids`).
struct JanusParticipant: Sendable, Equatable {
    let id: String
    let display: String?
    let muted: Bool
    /// Whether its PeerConnection is up; absent in some lists.
    let setup: Bool?
    /// Present only when the room reads audio levels for it.
    let talking: Bool?
}

/// A list of participants, held to `JanusLimits.participants`; `omitted` says how many were left out.
struct JanusParticipants: Sendable, Equatable {
    let list: [JanusParticipant]
    let omitted: Int

    init(_ list: [JanusParticipant], omitted: Int = 0) {
        self.list = list
        self.omitted = omitted
    }
}

/// AudioBridge codes the daemon tells apart (`janus_audiobridge.c`).
enum AudioBridgeErrorCode {
    static let noSuchRoom = 485
    static let roomExists = 486
    static let unauthorized = 489
}

/// What the AudioBridge plugin said (`plugindata.data`), by its `audiobridge` member.
enum AudioBridgeMessage: Sendable, Equatable {
    /// `exists`: whether the room exists.
    case exists(Bool)
    /// `create` made the room.
    case created
    /// This box joined: its id in the room and the others already there.
    case joined(selfId: String, others: JanusParticipants)
    /// Others joined (`joined` without an `id` of its own).
    case othersJoined(JanusParticipants)
    /// `listparticipants`: everyone in the room, this box included.
    case participants(JanusParticipants)
    /// An `event` with `participants`: they changed (`muted`, `setup`, `display`).
    case updated(JanusParticipants)
    /// A participant left (`leaving`: its id, or `ok` for this box on older servers).
    case leaving(String)
    /// A participant was kicked.
    case kicked(String)
    /// This box left (the answer to `leave`).
    case left
    case talking(id: String, Bool)
    /// The room was destroyed.
    case destroyed
    /// An `event` with `result: ok` (`configure`).
    case ok
    /// `error_code` and `error`.
    case error(JanusError)
    /// Something this daemon does not use.
    case other(String)

    init(plugindata: JSONValue) throws(JanusDecodingError) {
        guard let data = plugindata["data"], data.objectValue != nil else { throw JanusDecodingError(reason: "plugindata without data") }
        if let code = data["error_code"] {
            guard let code = code.intValue else { throw JanusDecodingError(reason: "a bad error_code") }
            self = .error(JanusError(code: code, reason: JanusMessage.reason(data["error"])))
            return
        }
        guard let kind = data["audiobridge"]?.stringValue else { throw JanusDecodingError(reason: "plugin data without 'audiobridge'") }
        switch kind {
        case "success" where data["exists"] != nil:
            guard let exists = data["exists"]?.boolValue else { throw JanusDecodingError(reason: "a bad 'exists'") }
            self = .exists(exists)
        case "created":
            self = .created
        case "joined":
            let others = try Self.participants(data["participants"])
            if let id = data["id"] {
                self = .joined(selfId: try Self.participantId(id), others: others)
            } else {
                self = .othersJoined(others)
            }
        case "participants":
            self = .participants(try Self.participants(data["participants"]))
        case "event":
            if let leaving = data["leaving"] {
                self = .leaving(leaving.stringValue == "ok" ? "ok" : try Self.participantId(leaving))
            } else if let kicked = data["kicked"] {
                self = .kicked(try Self.participantId(kicked))
            } else if data["participants"] != nil {
                self = .updated(try Self.participants(data["participants"]))
            } else if data["result"]?.stringValue == "ok" {
                self = .ok
            } else {
                self = .other("event")
            }
        case "left":
            self = .left
        case "talking", "stopped-talking":
            self = .talking(id: try Self.participantId(data["id"]), kind == "talking")
        case "destroyed":
            self = .destroyed
        default:
            self = .other(PeerText.clipped(kind, limit: 32))
        }
    }

    /// A participant id: a Janus number as decimal text, or a string id (1 to `JanusLimits.idBytes`
    /// bytes, no control characters).
    static func participantId(_ value: JSONValue?) throws(JanusDecodingError) -> String {
        if case .string(let text)? = value {
            guard !text.isEmpty, text.utf8.count <= JanusLimits.idBytes, !text.containsControlCharacters else {
                throw JanusDecodingError(reason: "a bad participant id")
            }
            return text
        }
        return String(try JanusMessage.id(value, "participant id"))
    }

    /// A list of participants; one that does not read is left out, as are those past the limit.
    private static func participants(_ value: JSONValue?) throws(JanusDecodingError) -> JanusParticipants {
        guard let value, !value.isNull else { return JanusParticipants([]) }
        guard let array = value.arrayValue else { throw JanusDecodingError(reason: "'participants' is not a list") }
        var list: [JanusParticipant] = []
        var omitted = 0
        for entry in array {
            guard list.count < JanusLimits.participants, entry.objectValue != nil,
                  let id = try? participantId(entry["id"]) else {
                omitted += 1
                continue
            }
            let display = entry["display"]?.stringValue.map { PeerText.clipped($0, limit: JanusLimits.displayCharacters) }
            list.append(JanusParticipant(id: id, display: display, muted: entry["muted"]?.boolValue ?? false,
                                         setup: entry["setup"]?.boolValue, talking: entry["talking"]?.boolValue))
        }
        return JanusParticipants(list, omitted: omitted)
    }
}
