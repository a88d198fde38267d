import JSONValue
import Testing
@testable import InteractiveDaemon

/// Janus' JSON API as the daemon writes and reads it: every request it sends, every reply and
/// event it uses, written as Janus 1.1.2 writes them (`janus.c`, `ice.c`, `janus_audiobridge.c`).
@Suite struct VoiceJanusTests {
    static let credentials = JanusCredentials(apiSecret: "secret", token: "token")

    static func json(_ kind: JanusRequest.Kind, credentials: JanusCredentials = credentials) -> JSONValue {
        JanusRequest(transaction: "v7", kind: kind, credentials: credentials).json
    }

    // MARK: Room ids

    @Test(arguments: [
        ("1234", JanusRoomID.number(1234)), ("1", .number(1)), ("9007199254740991", .number(9_007_199_254_740_991)),
        ("9007199254740992", .string("9007199254740992")), ("12345678901234567890", .string("12345678901234567890")),
        ("0", .string("0")), ("007", .string("007")), ("movie-night", .string("movie-night")), ("12a", .string("12a")),
        ("-5", .string("-5")), ("１２３", .string("１２３")), ("Phòng xem phim", .string("Phòng xem phim")),
    ])
    func aRoomIsANumberWhenAllDigitsAndExactElseAString(_ room: String, _ id: JanusRoomID) {
        #expect(JanusRoomID(room: room) == id)
    }

    // MARK: Requests

    @Test func sessionRequestsCarryTheTransactionSecretAndToken() {
        #expect(Self.json(.info) == ["janus": "info", "transaction": "v7", "apisecret": "secret", "token": "token"])
        #expect(Self.json(.create, credentials: JanusCredentials()) == ["janus": "create", "transaction": "v7"])
        #expect(Self.json(.claim(session: 77)) == ["janus": "claim", "session_id": 77, "transaction": "v7", "apisecret": "secret",
                                                   "token": "token"])
        #expect(Self.json(.keepalive(session: 77))["janus"] == "keepalive")
        #expect(Self.json(.attach(session: 77)) == ["janus": "attach", "session_id": 77, "plugin": "janus.plugin.audiobridge",
                                                    "transaction": "v7", "apisecret": "secret", "token": "token"])
        #expect(Self.json(.detach(session: 77, handle: 88)) == ["janus": "detach", "session_id": 77, "handle_id": 88,
                                                                "transaction": "v7", "apisecret": "secret", "token": "token"])
        #expect(Self.json(.destroy(session: 77), credentials: JanusCredentials()) == ["janus": "destroy", "session_id": 77,
                                                                                      "transaction": "v7"])
    }

    @Test func audioBridgeRequests() {
        func body(_ request: AudioBridgeRequest) -> JSONValue? {
            Self.json(.message(session: 1, handle: 2, request, offer: nil), credentials: JanusCredentials())["body"]
        }
        #expect(body(.exists(.number(5))) == ["request": "exists", "room": 5])
        #expect(body(.create(.string("r"))) == ["request": "create", "room": "r", "permanent": false, "audiolevel_event": true])
        #expect(body(.join(.string("r"), display: "Lan", muted: true, pin: "1234"))
            == ["request": "join", "room": "r", "display": "Lan", "muted": true, "pin": "1234"])
        #expect(body(.join(.number(9), display: "Lan", muted: false, pin: nil)) == ["request": "join", "room": 9, "display": "Lan",
                                                                                     "muted": false])
        #expect(body(.configure(muted: false)) == ["request": "configure", "muted": false])
        #expect(body(.leave) == ["request": "leave"])
        #expect(body(.listParticipants(.number(9))) == ["request": "listparticipants", "room": 9])
        let withOffer = Self.json(.message(session: 1, handle: 2, .configure(muted: false), offer: "v=0\r\n"), credentials: JanusCredentials())
        #expect(withOffer == ["janus": "message", "session_id": 1, "handle_id": 2, "transaction": "v7",
                              "body": ["request": "configure", "muted": false], "jsep": ["type": "offer", "sdp": "v=0\r\n"]])
    }

    @Test func trickleRequests() {
        #expect(Self.json(.trickle(session: 1, handle: 2, .candidate(mlineIndex: 0, candidate: "candidate:1 1 udp 1 10.0.0.2 5000 typ host")),
                          credentials: JanusCredentials())
            == ["janus": "trickle", "session_id": 1, "handle_id": 2, "transaction": "v7",
                "candidate": ["sdpMLineIndex": 0, "candidate": "candidate:1 1 udp 1 10.0.0.2 5000 typ host"]])
        #expect(Self.json(.trickle(session: 1, handle: 2, .completed))["candidate"] == ["completed": true])
    }

    @Test func theTextIsOneJSONObjectAndTheDescriptionHoldsNoSecret() throws {
        let request = JanusRequest(transaction: "v3", kind: .message(session: 1, handle: 2, .join(.string("r"), display: "d", muted: false,
                                                                                                  pin: "9999"), offer: nil),
                                   credentials: Self.credentials)
        #expect(try JSONValue.parse(request.text) == request.json)
        #expect(request.description == "join on handle 2 (v3)")
        let offer = JanusRequest(transaction: "v4", kind: .message(session: 1, handle: 2, .configure(muted: false), offer: "v=0 secret-sdp"),
                                 credentials: Self.credentials)
        #expect(offer.description == "configure with an offer on handle 2 (v4)")
    }

    // MARK: Replies and events

    static func read(_ json: JSONValue) throws -> JanusMessage { try JanusMessage(text: json.jsonText) }

    @Test func sessionReplies() throws {
        #expect(try Self.read(["janus": "server_info", "transaction": "v1", "name": "Janus WebRTC Server", "version": 1102,
                               "session-timeout": 60, "reclaim-session-timeout": 0, "plugins": ["janus.plugin.audiobridge": [:]]])
            == .serverInfo(transaction: "v1", sessionTimeout: 60))
        #expect(try Self.read(["janus": "server_info", "transaction": "v1"]) == .serverInfo(transaction: "v1", sessionTimeout: nil))
        #expect(try Self.read(["janus": "success", "transaction": "v2", "data": ["id": 4_513_237_181_190_111]])
            == .created(transaction: "v2", id: 4_513_237_181_190_111))
        #expect(try Self.read(["janus": "success", "session_id": 5, "transaction": "v3"]) == .success(transaction: "v3"))
        #expect(try Self.read(["janus": "ack", "session_id": 5, "transaction": "v4", "hint": "x"]) == .ack(transaction: "v4"))
        #expect(try Self.read(["janus": "error", "session_id": 5, "transaction": "v5",
                               "error": ["code": 458, "reason": "No such session 5"]])
            == .error(transaction: "v5", JanusError(code: 458, reason: "No such session 5")))
        #expect(try Self.read(["janus": "timeout", "session_id": 5]) == .timeout(session: 5))
    }

    @Test func mediaEventsOfAHandle() throws {
        #expect(try Self.read(["janus": "webrtcup", "session_id": 5, "sender": 6]) == .webrtcUp(sender: 6))
        #expect(try Self.read(["janus": "hangup", "session_id": 5, "sender": 6, "reason": "DTLS alert"])
            == .hangup(sender: 6, reason: "DTLS alert"))
        #expect(try Self.read(["janus": "media", "session_id": 5, "sender": 6, "mid": "0", "type": "audio", "receiving": false])
            == .media(sender: 6, receiving: false))
        #expect(try Self.read(["janus": "slowlink", "session_id": 5, "sender": 6, "media": "audio", "uplink": true, "lost": 10])
            == .slowLink(sender: 6))
        #expect(try Self.read(["janus": "detached", "session_id": 5, "sender": 6]) == .detached(sender: 6))
        #expect(try Self.read(["janus": "trickle", "session_id": 5, "sender": 6,
                               "candidate": ["sdpMid": "0", "sdpMLineIndex": 0, "candidate": "candidate:1 1 udp 2013266431 10.0.0.1 20000 typ host"]])
            == .trickle(sender: 6, .candidate(mlineIndex: 0, candidate: "candidate:1 1 udp 2013266431 10.0.0.1 20000 typ host")))
        #expect(try Self.read(["janus": "trickle", "session_id": 5, "sender": 6, "candidate": ["completed": true]])
            == .trickle(sender: 6, .completed))
        #expect(try Self.read(["janus": "something-new", "session_id": 5]) == .other("something-new"))
    }

    static func plugin(_ data: JSONValue, transaction: JSONValue? = nil, jsep: JSONValue? = nil) throws -> JanusPluginEvent? {
        var members: JSONObject = ["janus": "event", "session_id": 5, "sender": 6,
                                            "plugindata": ["plugin": "janus.plugin.audiobridge", "data": data]]
        if let transaction { members["transaction"] = transaction }
        if let jsep { members["jsep"] = jsep }
        if case .event(let event) = try read(.object(members)) { return event }
        return nil
    }

    static func bridge(_ data: JSONValue) throws -> AudioBridgeMessage? { try plugin(data)?.message }

    @Test func audioBridgeAnswers() throws {
        #expect(try Self.read(["janus": "success", "session_id": 5, "transaction": "v1", "sender": 6,
                               "plugindata": ["plugin": "janus.plugin.audiobridge",
                                              "data": ["audiobridge": "success", "room": 1234, "exists": false]]])
            == .pluginResult(JanusPluginEvent(transaction: "v1", sender: 6, message: .exists(false), jsep: nil)))
        #expect(try Self.bridge(["audiobridge": "created", "room": 1234, "permanent": false]) == .created)
        #expect(try Self.bridge(["audiobridge": "joined", "room": 1234, "id": 501, "display": "Lan", "participants": [
            ["id": 601, "display": "Minh", "setup": true, "muted": false, "talking": true],
            ["id": 602, "setup": false, "muted": true],
        ]]) == .joined(selfId: "501", others: JanusParticipants([
            JanusParticipant(id: "601", display: "Minh", muted: false, setup: true, talking: true),
            JanusParticipant(id: "602", display: nil, muted: true, setup: false, talking: nil),
        ])))
        #expect(try Self.bridge(["audiobridge": "joined", "room": "r", "participants": [["id": "minh-phone", "display": "Minh"]]])
            == .othersJoined(JanusParticipants([JanusParticipant(id: "minh-phone", display: "Minh", muted: false, setup: nil,
                                                                 talking: nil)])))
        #expect(try Self.bridge(["audiobridge": "participants", "room": 1, "participants": []]) == .participants(JanusParticipants([])))
        #expect(try Self.bridge(["audiobridge": "event", "room": 1, "participants": [["id": 7, "muted": true, "setup": true]]])
            == .updated(JanusParticipants([JanusParticipant(id: "7", display: nil, muted: true, setup: true, talking: nil)])))
        #expect(try Self.bridge(["audiobridge": "event", "room": 1, "leaving": 7]) == .leaving("7"))
        #expect(try Self.bridge(["audiobridge": "event", "room": 1, "leaving": "ok"]) == .leaving("ok"))
        #expect(try Self.bridge(["audiobridge": "event", "room": 1, "kicked": 7]) == .kicked("7"))
        #expect(try Self.bridge(["audiobridge": "left", "room": 1, "id": 501]) == .left)
        #expect(try Self.bridge(["audiobridge": "talking", "room": 1, "id": 7]) == .talking(id: "7", true))
        #expect(try Self.bridge(["audiobridge": "stopped-talking", "room": 1, "id": 7]) == .talking(id: "7", false))
        #expect(try Self.bridge(["audiobridge": "destroyed", "room": 1]) == .destroyed)
        #expect(try Self.bridge(["audiobridge": "event", "error_code": 489, "error": "Unauthorized (wrong pin)"])
            == .error(JanusError(code: 489, reason: "Unauthorized (wrong pin)")))
        #expect(try Self.bridge(["audiobridge": "announcement-started", "room": 1, "file_id": "f"]) == .other("announcement-started"))
        let configured = try #require(try Self.plugin(["audiobridge": "event", "room": 1, "result": "ok"], transaction: "v9",
                                                      jsep: ["type": "answer", "sdp": "v=0\r\n"]))
        #expect(configured == JanusPluginEvent(transaction: "v9", sender: 6, message: .ok, jsep: JanusJSEP(type: "answer", sdp: "v=0\r\n")))
    }

    @Test func aParticipantThatDoesNotReadIsLeftOutNotTheList() throws {
        let message = try Self.bridge(["audiobridge": "event", "room": 1, "participants": [
            ["id": 7, "display": "ok"], ["id": -1], ["display": "no id"], "not an object", ["id": 1.5], ["id": ""], ["id": 8],
        ]])
        #expect(message == .updated(JanusParticipants([
            JanusParticipant(id: "7", display: "ok", muted: false, setup: nil, talking: nil),
            JanusParticipant(id: "8", display: nil, muted: false, setup: nil, talking: nil),
        ], omitted: 5)))
    }

    @Test(arguments: [
        #"{"janus":"event","sender":6}"#,
        #"{"janus":"success"}"#,
        #"{"janus":"error","transaction":"v1","error":{}}"#,
        #"{"janus":"event","sender":6,"plugindata":{"data":{"audiobridge":"event","leaving":601}},"jsep":{"type":"answer"}}"#,
        #"{"janus":"trickle","sender":6}"#,
        #"{"janus":"trickle","sender":6,"candidate":{"sdpMLineIndex":0}}"#,
        #"{"janus":"webrtcup","sender":9007199254740993}"#,
        #"{"janus":"ack","transaction":"0123456789012345678901234567890123456789012345678901234567890123456789"}"#,
        #"{"janus":"event","sender":6,"plugindata":{"data":{"audiobridge":"talking","id":"\u2028"}}}"#,
    ])
    func badMessagesAreRefused(_ text: String) {
        #expect(throws: JanusDecodingError.self) { try JanusMessage(text: text) }
    }
}
