import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// Messages recorded from the real server: Debian's Janus 1.1.2 (`janus -F`, WebSocket transport
/// on 127.0.0.1, `api_secret`, `session_timeout = 10`, `reclaim_session_timeout = 20`) driven by
/// two `websockets` clients with the requests `JanusRequest` writes. They are read as recorded, and
/// a join is replayed through the core with them (only the transaction ids are the core's own).
/// What they show: a plugin event may come before its `ack`; a refused request of the AudioBridge
/// is a `success` (synchronous) or an `event` (asynchronous) with `error_code`; the box's own
/// `leave` is answered `left`, the others get `leaving`, also when a handle is detached or kicked;
/// a kicked participant gets `kicked` with its own id; a second `join` on a handle already in a
/// room is refused (491), which is why a rejoin takes a fresh handle.
@Suite struct VoiceJanusRecordedTests {
    static let serverInfo = #"{"janus": "server_info", "transaction": "p2", "name": "Janus WebRTC Server", "version": 1102, "version_string": "1.1.2", "author": "Meetecho s.r.l.", "commit-hash": "not-a-git-repo", "compile-time": "Thu Jan 19 08:09:02 UTC 2023", "log-to-stdout": true, "log-to-file": false, "data_channels": true, "accepting-new-sessions": true, "session-timeout": 10, "reclaim-session-timeout": 20, "candidates-timeout": 45, "server-name": "MyJanusInstance", "local-ip": "192.0.2.2", "ipv6": false, "ice-lite": false, "ice-tcp": false, "ice-nomination": "aggressive", "ice-keepalive-conncheck": false, "full-trickle": false, "mdns-enabled": true, "min-nack-queue": 200, "nack-optimizations": false, "twcc-period": 200, "dtls-mtu": 1200, "static-event-loops": 0, "api_secret": true, "auth_token": false, "event_handlers": false, "opaqueid_in_api": false, "dependencies": {"glib2": "2.74.6", "jansson": "2.14", "libnice": "0.1.18", "libsrtp": "libsrtp2 2.5.0", "libcurl": "7.88.1", "crypto": "OpenSSL 3.0.7 1 Nov 2022"}, "transports": {"janus.transport.websockets": {"name": "JANUS WebSockets transport plugin", "author": "Meetecho s.r.l.", "description": "This transport plugin adds WebSockets support to the Janus API via libwebsockets.", "version_string": "0.0.1", "version": 1}}, "events": {}, "loggers": {"janus.logger.jsonlog": {"name": "JANUS JSON logger plugin", "author": "Meetecho s.r.l.", "description": "This is a trivial sample logger plugin for Janus, which saves log lines to a local JSON file.", "version_string": "0.0.1", "version": 1}}, "plugins": {"janus.plugin.audiobridge": {"name": "JANUS AudioBridge plugin", "author": "Meetecho s.r.l.", "description": "This is a plugin implementing an audio conference bridge for Janus, mixing Opus streams.", "version_string": "0.0.12", "version": 12}}}"#
    static let noSecret = #"{"janus": "error", "transaction": "p1", "error": {"code": 403, "reason": "Unauthorized request (wrong or missing secret/token)"}}"#
    static let created = #"{"janus": "success", "transaction": "p3", "data": {"id": 4832660958082911}}"#
    static let attached = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p4", "data": {"id": 2508911918486265}}"#
    static let exists = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p6", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "success", "room": 999, "exists": true}}}"#
    static let stringRoom = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p7", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "error_code": 484, "error": "Invalid element type (room should be a positive integer)"}}}"#
    static let roomCreated = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p26", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "created", "room": 998, "permanent": false}}}"#
    static let roomExists = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p8", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "error_code": 486, "error": "Room 999 already exists"}}}"#
    static let wrongPin = #"{"janus": "event", "session_id": 241379289017956, "transaction": "p8", "sender": 8331567978504240, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "error_code": 489, "error": "Unauthorized (wrong pin)"}}}"#
    static let noSuchRoom = #"{"janus": "event", "session_id": 4832660958082911, "transaction": "p10", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "error_code": 485, "error": "No such room (4321)"}}}"#
    static let joined = #"{"janus": "event", "session_id": 4832660958082911, "transaction": "p12", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "joined", "room": 999, "id": 1165688239462667, "participants": [{"id": 4760750035448629, "display": "Lan", "setup": false, "muted": false}, {"id": 5014255164264728, "display": "Minh", "setup": false, "muted": true}]}}}"#
    static let joinAck = #"{"janus": "ack", "session_id": 4832660958082911, "transaction": "p12"}"#
    static let otherJoined = #"{"janus": "event", "session_id": 4832660958082911, "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "joined", "room": 999, "participants": [{"id": 2581096973240937, "display": "Minh", "setup": false, "muted": false}]}}}"#
    static let otherMuted = #"{"janus": "event", "session_id": 4832660958082911, "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "room": 999, "participants": [{"id": 2581096973240937, "display": "Minh", "setup": false, "muted": true}]}}}"#
    static let configured = #"{"janus": "event", "session_id": 8495084808175841, "transaction": "p17", "sender": 2529335042332517, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "result": "ok"}}}"#
    static let listed = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p18", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "participants", "room": 999, "participants": [{"id": 2581096973240937, "display": "Minh", "setup": false, "muted": true}, {"id": 4760750035448629, "display": "Lan", "setup": false, "muted": false}, {"id": 5014255164264728, "display": "Minh", "setup": false, "muted": true}, {"id": 1165688239462667, "display": "Lan", "setup": false, "muted": false}]}}}"#
    static let keepaliveAck = #"{"janus": "ack", "session_id": 4832660958082911, "transaction": "p19"}"#
    static let otherLeaving = #"{"janus": "event", "session_id": 4832660958082911, "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "room": 999, "leaving": 2581096973240937}}}"#
    static let left = #"{"janus": "event", "session_id": 8495084808175841, "transaction": "p21", "sender": 2529335042332517, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "left", "room": 999, "id": 2581096973240937}}}"#
    static let claimed = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p22"}"#
    static let relisted = #"{"janus": "success", "session_id": 4832660958082911, "transaction": "p23", "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "participants", "room": 999, "participants": [{"id": 4760750035448629, "display": "Lan", "setup": false, "muted": false}, {"id": 5014255164264728, "display": "Minh", "setup": false, "muted": true}, {"id": 1165688239462667, "display": "Lan", "setup": false, "muted": false}]}}}"#
    static let noSuchSession = #"{"janus": "error", "session_id": 12345, "transaction": "p24", "error": {"code": 458, "reason": "No such session 12345"}}"#
    static let kickedSelf = #"{"janus": "event", "session_id": 8495084808175841, "sender": 2529335042332517, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "room": 998, "kicked": 8650170677873721}}}"#
    static let alreadyInARoom = #"{"janus": "event", "session_id": 241379289017956, "transaction": "p12", "sender": 8331567978504240, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "event", "error_code": 491, "error": "Already in a room (use changeroom to join another one)"}}}"#
    static let destroyed = #"{"janus": "event", "session_id": 4832660958082911, "sender": 2508911918486265, "plugindata": {"plugin": "janus.plugin.audiobridge", "data": {"audiobridge": "destroyed", "room": 998}}}"#
    static let detached = #"{"janus": "detached", "session_id": 8495084808175841, "sender": 2529335042332517}"#
    static let timedOut = #"{"janus": "timeout", "session_id": 4832660958082911}"#

    static let session: UInt64 = 4_832_660_958_082_911
    static let handle: UInt64 = 2_508_911_918_486_265

    static func bridge(_ text: String) throws -> AudioBridgeMessage? {
        switch try JanusMessage(text: text) {
        case .event(let event), .pluginResult(let event): return event.message
        default: return nil
        }
    }

    @Test func theRecordedMessagesRead() throws {
        #expect(try JanusMessage(text: Self.serverInfo) == .serverInfo(transaction: "p2", sessionTimeout: 10))
        #expect(try JanusMessage(text: Self.noSecret) == .error(transaction: "p1", JanusError(
            code: 403, reason: "Unauthorized request (wrong or missing secret/token)")))
        #expect(try JanusMessage(text: Self.created) == .created(transaction: "p3", id: Self.session))
        #expect(try JanusMessage(text: Self.attached) == .created(transaction: "p4", id: Self.handle))
        #expect(try Self.bridge(Self.exists) == .exists(true))
        #expect(try Self.bridge(Self.stringRoom) == .error(JanusError(code: 484, reason: "Invalid element type (room should be a positive integer)")))
        #expect(try Self.bridge(Self.roomCreated) == .created)
        #expect(try Self.bridge(Self.roomExists) == .error(JanusError(code: 486, reason: "Room 999 already exists")))
        #expect(try Self.bridge(Self.wrongPin) == .error(JanusError(code: 489, reason: "Unauthorized (wrong pin)")))
        #expect(try Self.bridge(Self.noSuchRoom) == .error(JanusError(code: 485, reason: "No such room (4321)")))
        #expect(try Self.bridge(Self.joined) == .joined(selfId: "1165688239462667", others: JanusParticipants([
            JanusParticipant(id: "4760750035448629", display: "Lan", muted: false, setup: false, talking: nil),
            JanusParticipant(id: "5014255164264728", display: "Minh", muted: true, setup: false, talking: nil),
        ])))
        #expect(try JanusMessage(text: Self.joinAck) == .ack(transaction: "p12"))
        #expect(try Self.bridge(Self.otherJoined) == .othersJoined(JanusParticipants([
            JanusParticipant(id: "2581096973240937", display: "Minh", muted: false, setup: false, talking: nil),
        ])))
        #expect(try Self.bridge(Self.otherMuted) == .updated(JanusParticipants([
            JanusParticipant(id: "2581096973240937", display: "Minh", muted: true, setup: false, talking: nil),
        ])))
        #expect(try Self.bridge(Self.configured) == .ok)
        if case .participants(let everyone)? = try Self.bridge(Self.listed) {
            #expect(everyone.list.map(\.id) == ["2581096973240937", "4760750035448629", "5014255164264728", "1165688239462667"])
        } else {
            Issue.record("listparticipants did not read")
        }
        #expect(try JanusMessage(text: Self.keepaliveAck) == .ack(transaction: "p19"))
        #expect(try Self.bridge(Self.otherLeaving) == .leaving("2581096973240937"))
        #expect(try Self.bridge(Self.left) == .left)
        #expect(try JanusMessage(text: Self.claimed) == .success(transaction: "p22"))
        #expect(try JanusMessage(text: Self.noSuchSession) == .error(transaction: "p24", JanusError(code: 458, reason: "No such session 12345")))
        #expect(try Self.bridge(Self.kickedSelf) == .kicked("8650170677873721"))
        #expect(try Self.bridge(Self.alreadyInARoom) == .error(JanusError(
            code: 491, reason: "Already in a room (use changeroom to join another one)")))
        #expect(try Self.bridge(Self.destroyed) == .destroyed)
        #expect(try JanusMessage(text: Self.detached) == .detached(sender: 2_529_335_042_332_517))
        #expect(try JanusMessage(text: Self.timedOut) == .timeout(session: Self.session))
    }

    /// `recorded` with the transaction of the core's request `request` in place of the recorded one.
    static func answering(_ request: JanusRequest?, _ recorded: String) throws -> String {
        guard case .object(var members) = try JSONValue.parse(recorded) else { return recorded }
        members["transaction"] = .string(request?.transaction ?? "")
        return JSONValue.object(members).jsonText
    }

    @Test func aJoinReplayedWithTheRecordedMessages() throws {
        var voice = VoiceHarness(settings: VoiceSettings(url: "ws://127.0.0.1:18188",
                                                         credentials: JanusCredentials(apiSecret: "probe-secret")))
        let request = voice.join("999")
        var socket = try #require(voice.socket)
        func server(_ text: String) { voice.input(.janusReceived(socket, text)) }
        voice.input(.socketOpened(socket))
        server(try Self.answering(voice.request { $0 == .info }, Self.serverInfo))
        #expect(voice.core.link.keepaliveEvery == .milliseconds(3333))
        server(try Self.answering(voice.request { $0 == .create }, Self.created))
        server(try Self.answering(voice.request { $0 == .attach(session: Self.session) }, Self.attached))
        voice.mediaReady()
        #expect(voice.lastMessage("exists")?.json["body"] == ["request": "exists", "room": 999])
        server(try Self.answering(voice.lastMessage("exists"), Self.exists))
        // The event before its ack, as the server sent them.
        let join = voice.lastMessage("join")
        server(try Self.answering(join, Self.joined))
        server(try Self.answering(join, Self.joinAck))
        let status = try #require(voice.core.status)
        #expect(status.state == .joined && status.selfId == "1165688239462667")
        #expect(status.participants.map(\.peerId) == ["1165688239462667", "4760750035448629", "5014255164264728"])
        #expect(try voice.reply(to: request)?.get() == status.json)

        server(Self.otherJoined)
        #expect(voice.peers.map(\.event) == [.joined])
        server(Self.otherMuted)
        #expect(voice.peers == [VoicePeerEvent(room: "999", peerId: "2581096973240937", display: "Minh", event: .updated, muted: true)])
        server(Self.otherLeaving)
        #expect(voice.peers.map(\.event) == [.left])

        voice.input(.socketClosed(socket, reason: "reset"))
        voice.advance(by: .seconds(1))
        socket = try #require(voice.socket)
        voice.input(.socketOpened(socket))
        server(try Self.answering(voice.request { $0 == .claim(session: Self.session) }, Self.claimed))
        server(try Self.answering(voice.lastMessage("listparticipants"), Self.relisted))
        #expect(voice.core.status?.state == .joined)
        #expect(voice.core.status?.participants.count == 3)

        server(Self.destroyed)
        #expect(voice.states.map(\.state) == [.closed])
        server(Self.timedOut)
        #expect(voice.core.status?.state == .closed)
    }
}
