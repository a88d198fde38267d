import JSONValue

/// Why a message from the voice server was not read. It is ignored (and logged).
struct JanusDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// An error Janus or its plugin returned: the code and the server's reason (clipped).
struct JanusError: Sendable, Equatable {
    let code: Int
    let reason: String

    /// Janus' own codes the daemon tells apart (Janus' `apierror.h`).
    static let unauthorized = 403
    static let unauthorizedPlugin = 405
    static let sessionNotFound = 458
    static let handleNotFound = 459
}

/// An SDP from the server (`jsep`), within `JanusLimits.sdpBytes`.
struct JanusJSEP: Sendable, Equatable {
    let type: String
    let sdp: String
}

/// What bounds the daemon holds a voice server to: a message beyond them is not read.
enum JanusLimits {
    /// One WebSocket message.
    static let messageBytes = 1 << 20
    /// An SDP (an audio-only answer is 1 to 3 KiB).
    static let sdpBytes = 64 << 10
    /// One ICE candidate line.
    static let candidateBytes = 1024
    /// A participant id given as a string.
    static let idBytes = 128
    /// How much of a display name or a reason is kept, in characters.
    static let displayCharacters = 128
    static let reasonCharacters = 512
    /// The participants a list may hold; the rest are left out (and logged).
    static let participants = 256
}

/// A plugin event (`janus: "event"`) or the plugin data of a synchronous `success`.
struct JanusPluginEvent: Sendable, Equatable {
    /// Set when the event answers a request.
    let transaction: String?
    /// The handle it is for.
    let sender: UInt64
    let message: AudioBridgeMessage
    let jsep: JanusJSEP?
}

/// One message from Janus' WebSocket API, read strictly where it matters and tolerant of
/// members it does not know. Numbers that name sessions, handles and participants must be
/// whole, from 1 to 2^53 − 1 (Janus draws them below 2^53; a double holds no larger one exactly).
enum JanusMessage: Sendable, Equatable {
    /// The reply to `info`: the server's session timeout in seconds (0: none), when it gave one.
    case serverInfo(transaction: String, sessionTimeout: Int?)
    /// `success` of `create` or `attach`: the new session's or handle's id.
    case created(transaction: String, id: UInt64)
    /// `success` of a synchronous plugin request.
    case pluginResult(JanusPluginEvent)
    /// `success` without data (`claim`, `detach`, `destroy`).
    case success(transaction: String)
    case ack(transaction: String)
    case error(transaction: String?, JanusError)
    /// A plugin event, asynchronous (with the transaction it answers) or not.
    case event(JanusPluginEvent)
    /// The PeerConnection of `sender` is up (ICE and DTLS).
    case webrtcUp(sender: UInt64)
    /// The PeerConnection of `sender` is gone; for the AudioBridge, the participant left the room.
    case hangup(sender: UInt64, reason: String?)
    /// Whether Janus receives `sender`'s audio.
    case media(sender: UInt64, receiving: Bool)
    case slowLink(sender: UInt64)
    /// A remote ICE candidate, or the end of them.
    case trickle(sender: UInt64, JanusCandidate)
    /// The session timed out on the server: it is gone.
    case timeout(session: UInt64)
    /// The handle was detached.
    case detached(sender: UInt64)
    /// A kind of message this daemon does not use.
    case other(String)

    /// Reads one WebSocket message.
    init(text: String) throws(JanusDecodingError) {
        guard text.utf8.count <= JanusLimits.messageBytes else {
            throw JanusDecodingError(reason: "a message of \(text.utf8.count) bytes (at most \(JanusLimits.messageBytes))")
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(text, maxDepth: 32)
        } catch {
            throw JanusDecodingError(reason: "not JSON: \(error)")
        }
        try self.init(json: json)
    }

    init(json: JSONValue) throws(JanusDecodingError) {
        guard case .object = json, let janus = json["janus"]?.stringValue else {
            throw JanusDecodingError(reason: "no 'janus' member")
        }
        let transaction = try Self.transaction(json)
        switch janus {
        case "server_info":
            let timeout = json["session-timeout"]?.intValue.flatMap { $0 >= 0 ? $0 : nil }
            self = .serverInfo(transaction: try Self.required(transaction, janus), sessionTimeout: timeout)
        case "success":
            let transaction = try Self.required(transaction, janus)
            if let plugin = json["plugindata"] {
                self = .pluginResult(JanusPluginEvent(transaction: transaction, sender: try Self.id(json["sender"], "sender"),
                                                      message: try AudioBridgeMessage(plugindata: plugin), jsep: nil))
            } else if let data = json["data"], data["id"] != nil {
                self = .created(transaction: transaction, id: try Self.id(data["id"], "data.id"))
            } else {
                self = .success(transaction: transaction)
            }
        case "ack":
            self = .ack(transaction: try Self.required(transaction, janus))
        case "error":
            guard let error = json["error"], let code = error["code"]?.intValue else {
                throw JanusDecodingError(reason: "an error without error.code")
            }
            self = .error(transaction: transaction, JanusError(code: code, reason: Self.reason(error["reason"])))
        case "event":
            guard let plugin = json["plugindata"] else { throw JanusDecodingError(reason: "an event without plugindata") }
            self = .event(JanusPluginEvent(transaction: transaction, sender: try Self.id(json["sender"], "sender"),
                                           message: try AudioBridgeMessage(plugindata: plugin), jsep: try Self.jsep(json["jsep"])))
        case "webrtcup":
            self = .webrtcUp(sender: try Self.id(json["sender"], "sender"))
        case "hangup":
            self = .hangup(sender: try Self.id(json["sender"], "sender"), reason: json["reason"].map(Self.reason))
        case "media":
            guard let receiving = json["receiving"]?.boolValue else { throw JanusDecodingError(reason: "media without 'receiving'") }
            self = .media(sender: try Self.id(json["sender"], "sender"), receiving: receiving)
        case "slowlink":
            self = .slowLink(sender: try Self.id(json["sender"], "sender"))
        case "trickle":
            self = .trickle(sender: try Self.id(json["sender"], "sender"), try Self.candidate(json["candidate"]))
        case "timeout":
            self = .timeout(session: try Self.id(json["session_id"], "session_id"))
        case "detached":
            self = .detached(sender: try Self.id(json["sender"], "sender"))
        default:
            self = .other(PeerText.clipped(janus, limit: 32))
        }
    }

    // MARK: Members

    /// A session, handle or participant number: whole, 1 to 2^53 − 1.
    static func id(_ value: JSONValue?, _ name: String) throws(JanusDecodingError) -> UInt64 {
        guard case .number(let number)? = value, number >= 1, number < 9_007_199_254_740_992, number.rounded() == number,
              let id = UInt64(exactly: number) else {
            throw JanusDecodingError(reason: "'\(name)' is not a whole number from 1 to 2^53 - 1")
        }
        return id
    }

    /// A server's text (a reason, an error), made safe for a log line and clipped.
    static func reason(_ value: JSONValue?) -> String {
        PeerText.clipped(value?.stringValue ?? "", limit: JanusLimits.reasonCharacters)
    }

    private static func transaction(_ json: JSONValue) throws(JanusDecodingError) -> String? {
        guard let value = json["transaction"], !value.isNull else { return nil }
        guard let text = value.stringValue, text.utf8.count <= 64 else { throw JanusDecodingError(reason: "a bad 'transaction'") }
        return text
    }

    private static func required(_ transaction: String?, _ janus: String) throws(JanusDecodingError) -> String {
        guard let transaction else { throw JanusDecodingError(reason: "\(janus) without a transaction") }
        return transaction
    }

    private static func jsep(_ value: JSONValue?) throws(JanusDecodingError) -> JanusJSEP? {
        guard let value, !value.isNull else { return nil }
        guard let type = value["type"]?.stringValue, let sdp = value["sdp"]?.stringValue else {
            throw JanusDecodingError(reason: "a jsep without type and sdp")
        }
        guard sdp.utf8.count <= JanusLimits.sdpBytes else {
            throw JanusDecodingError(reason: "an SDP of \(sdp.utf8.count) bytes (at most \(JanusLimits.sdpBytes))")
        }
        return JanusJSEP(type: PeerText.clipped(type, limit: 16), sdp: sdp)
    }

    private static func candidate(_ value: JSONValue?) throws(JanusDecodingError) -> JanusCandidate {
        guard let value, value.objectValue != nil else { throw JanusDecodingError(reason: "a trickle without a candidate") }
        if value["completed"]?.boolValue == true { return .completed }
        guard let text = value["candidate"]?.stringValue, !text.isEmpty, text.utf8.count <= JanusLimits.candidateBytes,
              !text.containsControlCharacters else {
            throw JanusDecodingError(reason: "a bad candidate")
        }
        let index = value["sdpMLineIndex"]?.intValue ?? 0
        guard (0...63).contains(index) else { throw JanusDecodingError(reason: "a bad sdpMLineIndex") }
        return .candidate(mlineIndex: index, candidate: text)
    }
}
