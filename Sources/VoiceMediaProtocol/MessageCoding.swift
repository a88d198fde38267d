import JSONValue

/// A received message: known, with the fields it ignored, or of a type this version does not know.
public enum Received<Message: Sendable & Equatable>: Sendable, Equatable {
    /// `ignoredFields`: members the message's type does not define (sorted), to log once.
    case message(Message, ignoredFields: [String])
    /// A `type` this version does not know: ignored (logged once).
    case unknownType(String)
}

/// A line that breaks the protocol: the receiver closes the socket.
public struct VoiceMediaProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension DaemonMessage {
    /// Reads one decoded line. A known type whose fields are missing or of the wrong kind is a
    /// protocol error, like a line that is not JSON.
    public static func received(from json: JSONValue) throws(VoiceMediaProtocolError) -> Received<DaemonMessage> {
        let object = try MessageObject(json)
        switch object.type {
        case "start":
            let ice = try object.array("ice", required: false) ?? []
            var urls: [String] = []
            for url in ice {
                guard let text = url.stringValue else { throw VoiceMediaProtocolError("start: ice must be a list of strings") }
                urls.append(text)
            }
            let start = MediaStart(source: try object.string("source"), sink: try object.string("sink"),
                                   echoCancel: try object.bool("echoCancel"), ice: urls, muted: try object.bool("muted"))
            return object.received(.start(start), fields: ["source", "sink", "echoCancel", "ice", "muted"])
        case "answer":
            return object.received(.answer(sdp: try object.string("sdp")), fields: ["sdp"])
        case "candidate":
            return object.received(.candidate(try object.candidate()), fields: ["mlineIndex", "candidate", "completed"])
        case "mute":
            return object.received(.mute(try object.bool("muted")), fields: ["muted"])
        case "stop":
            return object.received(.stop, fields: [])
        default:
            return .unknownType(object.type)
        }
    }

    /// The message as a JSON object.
    public var json: JSONValue {
        switch self {
        case .start(let start):
            return ["type": "start", "source": .string(start.source), "sink": .string(start.sink),
                    "echoCancel": .bool(start.echoCancel), "ice": .array(start.ice.map(JSONValue.string)),
                    "muted": .bool(start.muted)]
        case .answer(let sdp): return ["type": "answer", "sdp": .string(sdp)]
        case .candidate(let candidate): return candidate.json
        case .mute(let muted): return ["type": "mute", "muted": .bool(muted)]
        case .stop: return ["type": "stop"]
        }
    }
}

extension MediaMessage {
    /// Reads one decoded line. A known type whose fields are missing or of the wrong kind is a
    /// protocol error, like a line that is not JSON.
    public static func received(from json: JSONValue) throws(VoiceMediaProtocolError) -> Received<MediaMessage> {
        let object = try MessageObject(json)
        switch object.type {
        case "ready":
            var elements: [String: Bool] = [:]
            for (name, value) in try object.object("elements") {
                guard let found = value.boolValue else { throw VoiceMediaProtocolError("ready: elements.\(name) must be a boolean") }
                elements[name] = found
            }
            return object.received(.ready(elements: elements), fields: ["elements"])
        case "offer":
            return object.received(.offer(sdp: try object.string("sdp")), fields: ["sdp"])
        case "candidate":
            return object.received(.candidate(try object.candidate()), fields: ["mlineIndex", "candidate", "completed"])
        case "state":
            let name = try object.string("ice")
            guard let ice = ICEConnectionState(rawValue: name) else { throw VoiceMediaProtocolError("state: unknown ice state \(name)") }
            let connection = try object.string("connection", required: false)
            return object.received(.state(ice: ice, connection: connection), fields: ["ice", "connection"])
        case "talking":
            let level = try object.int("level")
            guard (0...127).contains(level) else { throw VoiceMediaProtocolError("talking: level \(level) is not in 0...127") }
            return object.received(.talking(try object.bool("talking"), level: level), fields: ["talking", "level"])
        case "unavailable":
            return object.received(.unavailable(reason: try object.string("reason")), fields: ["reason"])
        case "error":
            return object.received(.error(message: try object.string("message")), fields: ["message"])
        default:
            return .unknownType(object.type)
        }
    }

    /// The message as a JSON object.
    public var json: JSONValue {
        switch self {
        case .ready(let elements): return ["type": "ready", "elements": .object(JSONObject(elements.mapValues(JSONValue.bool)))]
        case .offer(let sdp): return ["type": "offer", "sdp": .string(sdp)]
        case .candidate(let candidate): return candidate.json
        case .state(let ice, let connection):
            var members: JSONObject = ["type": "state", "ice": .string(ice.rawValue)]
            if let connection { members["connection"] = .string(connection) }
            return .object(members)
        case .talking(let talking, let level): return ["type": "talking", "talking": .bool(talking), "level": JSONValue(level)]
        case .unavailable(let reason): return ["type": "unavailable", "reason": .string(reason)]
        case .error(let message): return ["type": "error", "message": .string(message)]
        }
    }
}

extension TrickledCandidate {
    var json: JSONValue {
        switch self {
        case .candidate(let mlineIndex, let candidate):
            return ["type": "candidate", "mlineIndex": JSONValue(mlineIndex), "candidate": .string(candidate)]
        case .completed:
            return ["type": "candidate", "completed": true]
        }
    }
}

/// A received object and its `type`, with typed reads of its members.
private struct MessageObject {
    let type: String
    let members: JSONObject

    init(_ json: JSONValue) throws(VoiceMediaProtocolError) {
        guard let members = json.objectValue else { throw VoiceMediaProtocolError("a message must be a JSON object") }
        guard let type = members["type"]?.stringValue else { throw VoiceMediaProtocolError("a message must have a string type") }
        self.type = type
        self.members = members
    }

    func received<Message>(_ message: Message, fields: Set<String>) -> Received<Message> {
        let ignored = members.keys.filter { $0 != "type" && !fields.contains($0) }.sorted()
        return .message(message, ignoredFields: ignored)
    }

    private func member(_ name: String, required: Bool) throws(VoiceMediaProtocolError) -> JSONValue? {
        guard let value = members[name], !value.isNull else {
            if required { throw VoiceMediaProtocolError("\(type): \(name) is missing") }
            return nil
        }
        return value
    }

    private func wrongKind(_ name: String, _ kind: String) -> VoiceMediaProtocolError {
        VoiceMediaProtocolError("\(type): \(name) must be \(kind)")
    }

    func string(_ name: String) throws(VoiceMediaProtocolError) -> String {
        guard let value = try string(name, required: true) else { throw wrongKind(name, "a string") }
        return value
    }

    func string(_ name: String, required: Bool) throws(VoiceMediaProtocolError) -> String? {
        guard let value = try member(name, required: required) else { return nil }
        guard let text = value.stringValue else { throw wrongKind(name, "a string") }
        return text
    }

    func bool(_ name: String) throws(VoiceMediaProtocolError) -> Bool {
        guard let value = try member(name, required: true), let flag = value.boolValue else { throw wrongKind(name, "a boolean") }
        return flag
    }

    func int(_ name: String) throws(VoiceMediaProtocolError) -> Int {
        guard let value = try member(name, required: true), let number = value.intValue else { throw wrongKind(name, "an integer") }
        return number
    }

    func array(_ name: String, required: Bool) throws(VoiceMediaProtocolError) -> [JSONValue]? {
        guard let value = try member(name, required: required) else { return nil }
        guard let elements = value.arrayValue else { throw wrongKind(name, "a list") }
        return elements
    }

    func object(_ name: String) throws(VoiceMediaProtocolError) -> JSONObject {
        guard let value = try member(name, required: true), let object = value.objectValue else { throw wrongKind(name, "an object") }
        return object
    }

    /// `{completed: true}`, or `mlineIndex` (an integer >= 0) and `candidate`.
    func candidate() throws(VoiceMediaProtocolError) -> TrickledCandidate {
        if let completed = members["completed"], !completed.isNull {
            guard completed.boolValue == true else { throw VoiceMediaProtocolError("candidate: completed must be true when present") }
            return .completed
        }
        let mlineIndex = try int("mlineIndex")
        guard mlineIndex >= 0 else { throw VoiceMediaProtocolError("candidate: mlineIndex must not be negative") }
        return .candidate(mlineIndex: mlineIndex, candidate: try string("candidate"))
    }
}
