import JSONValue

/// A room's id as Janus' AudioBridge takes it: a number when the name is all digits (Janus'
/// default numeric ids), else a string (a server with `string_ids = true`). A number is sent only
/// when every JSON reader holds it exactly (1 to 2^53 − 1) and writes it back the same (no leading
/// zero); any other name, `007` or a 20-digit one, goes as a string, which a numeric server
/// refuses rather than joining a different room.
enum JanusRoomID: Sendable, Hashable {
    case number(UInt64)
    case string(String)

    static let largestNumber: UInt64 = (1 << 53) - 1

    init(room: String) {
        let digits = room.utf8
        if let first = digits.first, first != UInt8(ascii: "0"), digits.count <= 16,
           digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
           let value = UInt64(room), value <= Self.largestNumber {
            self = .number(value)
        } else {
            self = .string(room)
        }
    }

    var json: JSONValue {
        switch self {
        case .number(let value): return .number(Double(value))
        case .string(let text): return .string(text)
        }
    }
}

/// What authorises the daemon's requests: `voiceApiSecret` as `apisecret`, `voiceToken` as
/// `token`. Both are secrets: written only into the requests, never into a description.
struct JanusCredentials: Sendable, Equatable {
    var apiSecret: String?
    var token: String?
}

/// A local or remote ICE candidate as Janus' `trickle` carries it.
enum JanusCandidate: Sendable, Equatable {
    /// `candidate` is the `candidate:…` text (without `a=`).
    case candidate(mlineIndex: Int, candidate: String)
    /// No more candidates.
    case completed

    var json: JSONValue {
        switch self {
        case .candidate(let index, let candidate): return ["sdpMLineIndex": .number(Double(index)), "candidate": .string(candidate)]
        case .completed: return ["completed": true]
        }
    }
}

/// A request to the AudioBridge plugin (a Janus `message`'s `body`).
enum AudioBridgeRequest: Sendable, Equatable {
    case exists(JanusRoomID)
    /// A room that lives until the server restarts, raising `talking` events.
    case create(JanusRoomID)
    /// `pin` is a secret.
    case join(JanusRoomID, display: String, muted: Bool, pin: String?)
    case configure(muted: Bool)
    case leave
    case listParticipants(JanusRoomID)

    /// The request's name, for logs.
    var name: String {
        switch self {
        case .exists: return "exists"
        case .create: return "create"
        case .join: return "join"
        case .configure: return "configure"
        case .leave: return "leave"
        case .listParticipants: return "listparticipants"
        }
    }

    var body: JSONValue {
        switch self {
        case .exists(let room): return ["request": "exists", "room": room.json]
        case .create(let room):
            return ["request": "create", "room": room.json, "permanent": false, "audiolevel_event": true]
        case .join(let room, let display, let muted, let pin):
            var members: JSONObject = ["request": "join", "room": room.json, "display": .string(display), "muted": .bool(muted)]
            if let pin { members["pin"] = .string(pin) }
            return .object(members)
        case .configure(let muted): return ["request": "configure", "muted": .bool(muted)]
        case .leave: return ["request": "leave"]
        case .listParticipants(let room): return ["request": "listparticipants", "room": room.json]
        }
    }
}

/// One request of Janus' JSON API, with the transaction id the daemon chose. Its description
/// names the request and never holds a secret (`apisecret`, `token`, a pin) or an SDP.
struct JanusRequest: Sendable, Equatable, CustomStringConvertible {
    /// The plugin every handle attaches to.
    static let audioBridge = "janus.plugin.audiobridge"

    enum Kind: Sendable, Equatable {
        case info
        case create
        case claim(session: UInt64)
        case keepalive(session: UInt64)
        case attach(session: UInt64)
        case detach(session: UInt64, handle: UInt64)
        case destroy(session: UInt64)
        /// An AudioBridge request, with the local SDP offer (`jsep`) for `configure`.
        case message(session: UInt64, handle: UInt64, AudioBridgeRequest, offer: String?)
        case trickle(session: UInt64, handle: UInt64, JanusCandidate)
    }

    let transaction: String
    let kind: Kind
    let credentials: JanusCredentials

    /// The request as sent.
    var json: JSONValue {
        var members: JSONObject = ["transaction": .string(transaction)]
        if let secret = credentials.apiSecret { members["apisecret"] = .string(secret) }
        if let token = credentials.token { members["token"] = .string(token) }
        switch kind {
        case .info: members["janus"] = "info"
        case .create: members["janus"] = "create"
        case .claim(let session): Self.add("claim", session: session, to: &members)
        case .keepalive(let session): Self.add("keepalive", session: session, to: &members)
        case .attach(let session):
            Self.add("attach", session: session, to: &members)
            members["plugin"] = .string(Self.audioBridge)
        case .detach(let session, let handle): Self.add("detach", session: session, handle: handle, to: &members)
        case .destroy(let session): Self.add("destroy", session: session, to: &members)
        case .message(let session, let handle, let request, let offer):
            Self.add("message", session: session, handle: handle, to: &members)
            members["body"] = request.body
            if let offer { members["jsep"] = ["type": "offer", "sdp": .string(offer)] }
        case .trickle(let session, let handle, let candidate):
            Self.add("trickle", session: session, handle: handle, to: &members)
            members["candidate"] = candidate.json
        }
        return .object(members)
    }

    /// The request as one WebSocket text message.
    var text: String { json.jsonText }

    var description: String {
        switch kind {
        case .info: return "info (\(transaction))"
        case .create: return "create (\(transaction))"
        case .claim(let session): return "claim session \(session) (\(transaction))"
        case .keepalive(let session): return "keepalive session \(session) (\(transaction))"
        case .attach(let session): return "attach session \(session) (\(transaction))"
        case .detach(_, let handle): return "detach handle \(handle) (\(transaction))"
        case .destroy(let session): return "destroy session \(session) (\(transaction))"
        case .message(_, let handle, let request, let offer):
            return "\(request.name)\(offer == nil ? "" : " with an offer") on handle \(handle) (\(transaction))"
        case .trickle(_, let handle, let candidate):
            return "trickle \(candidate == .completed ? "completed" : "candidate") on handle \(handle) (\(transaction))"
        }
    }

    private static func add(_ janus: String, session: UInt64, handle: UInt64? = nil, to members: inout JSONObject) {
        members["janus"] = .string(janus)
        members["session_id"] = .number(Double(session))
        if let handle { members["handle_id"] = .number(Double(handle)) }
    }
}
