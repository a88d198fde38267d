import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// What the voice server refuses (never retried), what it sends that does not read (ignored,
/// never a trap), and what the logs never hold (a pin, the API secret, the token).
@Suite struct VoiceCoreRefusalTests {
    /// Nothing goes out for five minutes: no request, no socket, no process.
    static func expectNoRetry(_ voice: inout VoiceHarness) {
        let before = voice.all.count
        voice.advance(by: .seconds(300))
        let after = voice.all.dropFirst(before)
        #expect(!after.contains { effect in
            switch effect {
            case .sendJanus, .openSocket, .startMedia: return true
            default: return false
            }
        })
    }

    @Test func aWrongPinIsBackendRefusedWithTheServersReasonAndNotRetried() throws {
        var voice = VoiceHarness()
        let request = voice.join(pin: "4821")
        voice.connect()
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": true])
        #expect(voice.lastMessage("join")?.json["body"]?["pin"] == "4821")
        voice.pluginEvent(voice.lastMessage("join"), ["audiobridge": "event", "error_code": 489, "error": "Unauthorized (wrong pin)"])
        let error = try #require(voice.error(of: request))
        #expect(error.name == "interactive.BackendRefused")
        #expect(error.data?["reason"] == "Unauthorized (wrong pin)")
        #expect(error.data?["code"] == 489)
        #expect(voice.states.last?.state == .error)
        #expect(voice.sentLast.map(\.kind) == [.destroy(session: VoiceHarness.sessionId)])
        Self.expectNoRetry(&voice)
    }

    @Test func refusedCredentialsAreBackendRefused() throws {
        var voice = VoiceHarness(settings: VoiceSettings(url: VoiceHarness.url, credentials: JanusCredentials(apiSecret: "wrong")))
        let request = voice.join()
        voice.input(.socketOpened(try #require(voice.socket)))
        let info = try #require(voice.request { $0 == .info })
        voice.server(["janus": "server_info", "transaction": .string(info.transaction), "session-timeout": 60])
        let create = try #require(voice.request { $0 == .create })
        voice.server(["janus": "error", "transaction": .string(create.transaction),
                      "error": ["code": 403, "reason": "Unauthorized request (wrong or missing secret/token)"]])
        let error = try #require(voice.error(of: request))
        #expect(error.name == "interactive.BackendRefused")
        #expect(error.message.contains("check voiceApiSecret and voiceToken"))
        Self.expectNoRetry(&voice)
    }

    @Test func aServerWithoutTheAudioBridgeIsBackendRefused() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.input(.socketOpened(try #require(voice.socket)))
        let info = try #require(voice.request { $0 == .info })
        voice.server(["janus": "server_info", "transaction": .string(info.transaction)])
        let create = try #require(voice.request { $0 == .create })
        voice.server(["janus": "success", "transaction": .string(create.transaction), "data": ["id": 42]])
        let attach = try #require(voice.request { $0 == .attach(session: 42) })
        voice.server(["janus": "error", "session_id": 42, "transaction": .string(attach.transaction),
                      "error": ["code": 460, "reason": "No such plugin 'janus.plugin.audiobridge'"]])
        #expect(voice.error(of: request)?.data?["code"] == 460)
        Self.expectNoRetry(&voice)
    }

    @Test func aRoomGoneBetweenExistsAndJoinIsNoRoom() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.connect()
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": true])
        voice.pluginEvent(voice.lastMessage("join"), ["audiobridge": "event", "error_code": 485, "error": "No such room (movie-night)"])
        #expect(voice.error(of: request)?.name == "interactive.NoRoom")
    }

    @Test func aStringRoomOnANumericServerIsRefusedNotRetried() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.connect()
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "event", "error_code": 484,
                                                          "error": "Invalid element type (room should be a positive integer)"])
        #expect(voice.error(of: request)?.name == "interactive.BackendRefused")
        Self.expectNoRetry(&voice)
    }

    @Test func aRefusedOfferIsBackendRefused() throws {
        var voice = VoiceHarness.inRoom()
        voice.mediaSays(.offer(sdp: VoiceHarness.offer))
        voice.pluginEvent(voice.lastMessage("configure"), ["audiobridge": "event", "error_code": 493, "error": "Error parsing offer"])
        #expect(voice.core.status?.state == .error)
        #expect(voice.core.status?.error?.name == "interactive.BackendRefused")
    }

    @Test func aStaleAnswerIsIgnored() throws {
        var voice = VoiceHarness.joined()
        // An answer for a transaction nobody waits for, and one from another handle.
        voice.pluginEvent(nil, ["audiobridge": "joined", "room": "movie-night", "id": 999, "participants": []])
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "leaving": 601], handle: 12345)
        #expect(voice.core.status?.selfId == "501")
        #expect(voice.core.status?.participants.count == 3)
    }

    // MARK: Malformed input

    static let malformed: [String] = [
        "", "{", "[]", "null", "42", "\"janus\"", #"{"janus":5}"#, #"{"nojanus":"event"}"#,
        #"{"janus":"event"}"#,
        #"{"janus":"event","sender":-1,"plugindata":{"data":{"audiobridge":"event","leaving":601}}}"#,
        #"{"janus":"event","sender":1e300,"plugindata":{"data":{"audiobridge":"event","leaving":601}}}"#,
        #"{"janus":"event","sender":1.5,"plugindata":{"data":{"audiobridge":"event","leaving":601}}}"#,
        #"{"janus":"event","sender":"7111224983300122","plugindata":{"data":{"audiobridge":"event","leaving":601}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":"x"}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","participants":"x"}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","leaving":{}}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","kicked":null}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"talking","id":-3}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","error_code":"x"}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","leaving":18446744073709551616}}}"#,
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","leaving":"\u0000x"}}}"#,
        #"{"janus":"trickle","sender":7111224983300122,"candidate":{"candidate":"candidate:1\nforged"}}"#,
        #"{"janus":"trickle","sender":7111224983300122,"candidate":{"candidate":"candidate:1","sdpMLineIndex":-1}}"#,
        #"{"janus":"error","transaction":"v1","error":{"reason":"no code"}}"#,
        #"{"janus":"success","transaction":7}"#,
        #"{"janus":"success","transaction":"v1","data":{"id":0}}"#,
        #"{"janus":"media","sender":7111224983300122}"#,
        #"{"janus":"timeout","session_id":"4513237181190111"}"#,
        #"{"janus":"hangup"}"#,
        String(repeating: "[", count: 5000),
        #"{"janus":"event","sender":7111224983300122,"plugindata":{"data":{"audiobridge":"event","result":"ok"}},"jsep":{"type":"answer","sdp":""#
            + String(repeating: "a", count: 70_000) + #""}}"#,
        "{\"janus\":\"ack\",\"transaction\":\"" + String(repeating: "x", count: 2 << 20) + "\"}",
    ]

    @Test func malformedServerMessagesAreIgnoredWithoutTrapping() throws {
        var voice = VoiceHarness.joined()
        let before = voice.core.status
        for text in Self.malformed {
            let effects = voice.input(.janusReceived(try #require(voice.socket), text))
            #expect(effects.allSatisfy { if case .log = $0 { return true } else { return false } }, "\(text.prefix(80))")
        }
        #expect(voice.core.status == before)
        // A long display name is clipped, control characters escaped.
        voice.roomEvent(["audiobridge": "joined", "room": "movie-night",
                         "participants": [["id": 700, "display": .string("Bad\u{1B}[2J" + String(repeating: "é", count: 1000))]]])
        let display = try #require(voice.peers.first?.display)
        #expect(display.hasPrefix("Bad\\u{1B}[2J"))
        #expect(!display.containsControlCharacters && display.count < 200)
    }

    @Test func aParticipantListIsHeldToItsLimit() throws {
        let crowd = (0..<400).map { VoiceHarness.peer(1000 + $0, "p\($0)") }
        let voice = VoiceHarness.joined(others: crowd)
        #expect(voice.core.status?.participants.count == VoiceRoster.limit + 1)
        #expect(voice.logs.contains(.participantsLeftOut(room: "movie-night", count: 400 - VoiceRoster.limit)))
    }

    // MARK: Secrets

    @Test func noSecretReachesALogLineOrADescription() throws {
        let secrets = ["pin-8462", "api-SECRET-1", "tok-SECRET-2"]
        let settings = VoiceSettings(url: "wss://user:pw-SECRET-3@voice.example:8989/janus",
                                     credentials: JanusCredentials(apiSecret: secrets[1], token: secrets[2]))
        var voice = VoiceHarness.joined(pin: secrets[0], settings: settings)
        voice.input(.socketClosed(try #require(voice.socket), reason: "reset"))
        voice.advance(by: .seconds(1))
        voice.input(.socketOpened(try #require(voice.socket)))
        let claim = try #require(voice.request { if case .claim = $0 { return true } else { return false } })
        voice.server(["janus": "error", "transaction": .string(claim.transaction), "error": ["code": 458, "reason": "No such session"]])
        // A new session and a new join, which the server refuses.
        let info = try #require(voice.request { $0 == .info })
        voice.server(["janus": "server_info", "transaction": .string(info.transaction), "session-timeout": 30])
        voice.createSession(9_000_000_000_001, handle: 9_000_000_000_002)
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": true])
        voice.pluginEvent(voice.lastMessage("join"), ["audiobridge": "event", "error_code": 489, "error": "Unauthorized (wrong pin)"])
        #expect(voice.core.status?.error?.name == "interactive.BackendRefused")
        let texts = voice.logs.map(\.message) + voice.sent.map(\.description)
            + [VoiceJoinParams(room: "r", pin: secrets[0]).description] + voice.allStates.compactMap { $0.error?.message }
        #expect(voice.logs.count > 5)
        for text in texts {
            for secret in secrets + ["pw-SECRET-3"] { #expect(!text.contains(secret), "\(text)") }
        }
        // They do go where they belong: into the requests.
        #expect(voice.lastMessage("join")?.text.contains(secrets[0]) == true)
        #expect(voice.sent.allSatisfy { $0.text.contains(secrets[1]) && $0.text.contains(secrets[2]) })
        #expect(voice.logs.first == .connecting(host: "voice.example"))
    }
}
