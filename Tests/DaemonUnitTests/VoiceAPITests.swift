import IPCProtocol
import JSONValue
import Testing

/// The typed voice API (IPC.md, Voice rooms): what `voice.join`, `voice.leave` and `voice.mute`
/// accept, and the exact shape of their results, the events and `daemon.status`'s `voice`.
@Suite struct VoiceAPITests {
    static func join(_ params: JSONValue) throws(RPCError) -> VoiceJoinParams { try VoiceJoinParams(params: params) }

    static func invalid(_ params: JSONValue) -> RPCError? {
        do {
            _ = try join(params)
            return nil
        } catch {
            return error
        }
    }

    @Test func joinReadsItsParamsWithTheirDefaults() throws {
        let plain = try Self.join(["room": "movie-night"])
        #expect(plain == VoiceJoinParams(room: "movie-night"))
        #expect(plain.effectiveTimeoutMs == 10_000 && !plain.muted && plain.display == nil && plain.pin == nil)
        let full = try Self.join(["room": "Phòng xem phim", "display": "Lan", "muted": true, "pin": "4821", "timeoutMs": 2500])
        #expect(full == VoiceJoinParams(room: "Phòng xem phim", display: "Lan", muted: true, pin: "4821", timeoutMs: 2500))
        #expect(try VoiceJoinParams(params: full.params) == full)
        // A numeric room may be given as a number.
        #expect(try Self.join(["room": 1234]).room == "1234")
        #expect(try Self.join(["room": .string(String(repeating: "ồ", count: 64))]).room.count == 64)
    }

    @Test(arguments: [
        ["display": "x"], ["room": ""], ["room": .string(String(repeating: "a", count: 65))], ["room": "a\nb"],
        ["room": "a\u{0}b"], ["room": "tab\there"], ["room": true], ["room": ["x"]], ["room": "r", "display": ""],
        ["room": "r", "display": .string(String(repeating: "d", count: 65))], ["room": "r", "muted": "yes"],
        ["room": "r", "pin": .string(String(repeating: "9", count: 257))], ["room": "r", "pin": "1\r\n2"],
        ["room": "r", "timeoutMs": -1], ["room": "r", "timeoutMs": 1.5], ["room": "r", "timeoutMs": 600_001], "not an object",
    ] as [JSONValue])
    func badJoinParamsAreInvalidParams(_ params: JSONValue) {
        #expect(Self.invalid(params)?.code == RPCErrorCode.invalidParams)
    }

    @Test func thePinNeverShowsWhenPrinted() {
        let params = VoiceJoinParams(room: "r", pin: "4821")
        #expect(!String(describing: params).contains("4821"))
        #expect(String(describing: params) == "voice.join room=r muted=false pin=(set)")
    }

    @Test func muteNeedsMutedAndLeaveTakesNothing() throws {
        #expect(try VoiceMuteParams(params: ["muted": true]) == VoiceMuteParams(muted: true))
        #expect(throws: RPCError.invalidParams("'muted' is required")) { try VoiceMuteParams(params: [:]) }
        #expect(throws: RPCError.self) { try VoiceMuteParams(params: ["muted": "on"]) }
        #expect(try VoiceLeaveParams(params: nil) == VoiceLeaveParams())
        #expect(VoiceJoinParams.method == .voiceJoin && VoiceLeaveParams.method == .voiceLeave && VoiceMuteParams.method == .voiceMute)
        #expect([IPCMethod.voiceJoin, .voiceLeave, .voiceMute].allSatisfy { !$0.isObserverAllowed })
        #expect(IPCMethod(rawValue: "voice.join") == .voiceJoin)
        #expect(DaemonErrorName.voiceUnavailable.rawValue == "interactive.VoiceUnavailable")
    }

    static let status = VoiceStatus(room: "movie-night", state: .joined, selfId: "501", muted: false, participants: [
        VoiceParticipant(peerId: "501", display: "Lan", muted: false, talking: true),
        VoiceParticipant(peerId: "602", display: nil, muted: true, talking: false),
    ])

    @Test func theStatusAndTheJoinResultAreOneShape() throws {
        let json: JSONValue = [
            "room": "movie-night", "state": "joined", "selfId": "501", "muted": false, "error": nil,
            "participants": [
                ["peerId": "501", "display": "Lan", "muted": false, "talking": true],
                ["peerId": "602", "display": nil, "muted": true, "talking": false],
            ],
        ]
        #expect(Self.status.json == json)
        #expect(VoiceStatus(json: json) == Self.status)
        let failed = VoiceStatus(room: "r", state: .error, selfId: nil, muted: false, participants: [],
                                 error: RoomStateEvent.Failure(name: "interactive.BackendRefused", message: "wrong pin"))
        #expect(failed.json["error"] == ["name": "interactive.BackendRefused", "message": "wrong pin"])
        #expect(VoiceStatus(json: failed.json) == failed)
        #expect(VoiceStatus(json: ["room": "r", "state": "dancing"]) == nil)
        let daemon = try #require(DaemonStatus(json: ["bootId": "b", "voice": Self.status.json]))
        #expect(daemon.voice == Self.status)
        #expect(DaemonStatus(json: ["bootId": "b", "voice": nil])?.voice == nil)
    }

    @Test func theResultsOfLeaveAndMute() {
        #expect(VoiceLeaveResult(room: "r").json == ["room": "r", "state": "left"])
        #expect(VoiceLeaveResult(json: ["room": "r", "state": "left"]) == VoiceLeaveResult(room: "r"))
        #expect(VoiceMuteResult(room: "r", muted: true).json == ["room": "r", "muted": true])
        #expect(VoiceMuteResult(json: ["room": "r", "muted": true]) == VoiceMuteResult(room: "r", muted: true))
    }

    @Test func theEvents() {
        let state = VoiceStateEvent(room: "r", state: .left, selfId: nil, muted: true, participants: 0, reason: .kicked)
        #expect(VoiceStateEvent.type == "voice.state")
        #expect(state.data == ["room": "r", "state": "left", "selfId": nil, "muted": true, "participants": 0, "error": nil,
                               "reason": "kicked"])
        #expect(VoiceStateEvent(data: state.data) == state)
        let peer = VoicePeerEvent(room: "r", peerId: "7", display: "Minh", event: .left, muted: false, reason: .disconnected)
        #expect(VoicePeerEvent.type == "voice.peer")
        #expect(peer.data == ["room": "r", "peerId": "7", "display": "Minh", "event": "left", "muted": false, "reason": "disconnected"])
        #expect(VoicePeerEvent(data: peer.data) == peer)
        let talking = VoiceTalkingEvent(room: "r", peerId: "7", talking: true)
        #expect(VoiceTalkingEvent.type == "voice.talking")
        #expect(talking.data == ["room": "r", "peerId": "7", "talking": true])
        #expect(VoiceTalkingEvent(data: talking.data) == talking)
        let envelope = EventEnvelope(bootId: "b", seq: 3, type: EventType.voiceTalking, time: "t", data: talking.data)
        #expect(envelope.decode(VoiceTalkingEvent.self) == talking)
    }
}
