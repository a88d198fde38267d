import JSONValue
import Testing
import VoiceMediaProtocol

@Suite struct VoiceMediaLineDecoderTests {
    /// What a new decoder makes of `bytes`.
    private func decoded(_ bytes: [UInt8], limit: Int = VoiceMediaLine.maxLineBytes) throws -> [JSONValue] {
        var decoder = VoiceMediaLineDecoder(maxLineBytes: limit)
        return try decoder.append(bytes)
    }

    @Test func linesInAnyChunkingBecomeValues() throws {
        var decoder = VoiceMediaLineDecoder()
        #expect(try decoder.append(Array(#"{"type":"stop"}"#.utf8) + [0x0A] + Array(#"{"type":"mu"#.utf8)) == [["type": "stop"]])
        #expect(try decoder.append(Array(#"te","muted":true}"#.utf8)).isEmpty)
        #expect(try decoder.append([0x0A]) == [["type": "mute", "muted": true]])
    }

    @Test func aLineAtTheLimitIsTakenOneByteMoreIsAProtocolError() throws {
        let padding = String(repeating: "x", count: 30)
        let line = Array(#"{"type":"x","p":"\#(padding)"}"#.utf8)
        var atLimit = VoiceMediaLineDecoder(maxLineBytes: line.count)
        #expect(try atLimit.append(line + [0x0A]).count == 1)
        #expect(throws: VoiceMediaProtocolError.self) { try decoded(line + [0x0A], limit: line.count - 1) }
    }

    @Test func anUnfinishedLineOverTheLimitFailsBeforeItsNewline() {
        #expect(throws: VoiceMediaProtocolError.self) { try decoded(Array("123456789".utf8), limit: 8) }
    }

    @Test func theDefaultLimitIs256KiB() {
        #expect(VoiceMediaLine.maxLineBytes == 262_144)
    }

    @Test func aLineThatIsNotJSONIsAProtocolError() {
        #expect(throws: VoiceMediaProtocolError.self) { try decoded(Array("not json\n".utf8)) }
        #expect(throws: VoiceMediaProtocolError.self) { try decoded([0x0A]) }
    }

    @Test func encodingWritesOneLine() throws {
        let line = VoiceMediaLine.encode(MediaMessage.offer(sdp: "v=0\r\n").json)
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        var decoder = VoiceMediaLineDecoder()
        #expect(try decoder.append(line) == [MediaMessage.offer(sdp: "v=0\r\n").json])
    }
}

@Suite struct DaemonMessageTests {
    private func decode(_ text: String) throws -> Received<DaemonMessage> {
        try DaemonMessage.received(from: JSONValue.parse(text))
    }

    @Test func everyMessageRoundTrips() throws {
        let messages: [DaemonMessage] = [
            .start(MediaStart(source: "audiotestsrc is-live=true", sink: "fakesink", echoCancel: true, ice: ["stun:stun.example:3478"], muted: false)),
            .answer(sdp: "v=0\r\n"),
            .candidate(.candidate(mlineIndex: 0, candidate: "candidate:1 1 UDP 2015363327 10.0.0.1 5000 typ host")),
            .candidate(.completed),
            .mute(true),
            .stop,
        ]
        for message in messages {
            #expect(try DaemonMessage.received(from: message.json) == .message(message, ignoredFields: []))
        }
    }

    @Test func theWireFormIsTheProtocols() throws {
        #expect(DaemonMessage.stop.json.jsonText == #"{"type":"stop"}"#)
        #expect(DaemonMessage.candidate(.completed).json.jsonText == #"{"completed":true,"type":"candidate"}"#)
        #expect(try decode(#"{"type":"start","source":"a","sink":"b","echoCancel":false,"ice":[],"muted":true}"#)
            == .message(.start(MediaStart(source: "a", sink: "b", echoCancel: false, ice: [], muted: true)), ignoredFields: []))
    }

    @Test func unknownTypesAndFieldsAreReportedNotRefused() throws {
        #expect(try decode(#"{"type":"renegotiate","x":1}"#) == .unknownType("renegotiate"))
        #expect(try decode(#"{"type":"mute","muted":false,"why":"remote key","v":2}"#) == .message(.mute(false), ignoredFields: ["v", "why"]))
    }

    @Test func aKnownTypeWithoutItsFieldsIsAProtocolError() {
        for text in [#"{"type":"answer"}"#, #"{"type":"answer","sdp":5}"#, #"{"type":"mute"}"#,
                     #"{"type":"candidate","candidate":"c"}"#, #"{"type":"candidate","mlineIndex":-1,"candidate":"c"}"#,
                     #"{"type":"candidate","completed":false}"#, #"{"type":"start","source":"a","sink":"b","echoCancel":false,"muted":false,"ice":[1]}"#,
                     #"{"type":1}"#, #"[]"#] {
            #expect(throws: VoiceMediaProtocolError.self, "\(text)") { try decode(text) }
        }
    }

    @Test func startWithoutIceMeansNoServers() throws {
        #expect(try decode(#"{"type":"start","source":"a","sink":"b","echoCancel":true,"muted":false}"#)
            == .message(.start(MediaStart(source: "a", sink: "b", echoCancel: true, ice: [], muted: false)), ignoredFields: []))
    }
}

@Suite struct MediaMessageTests {
    @Test func everyMessageRoundTrips() throws {
        let messages: [MediaMessage] = [
            .ready(elements: ["webrtcdsp": true]),
            .offer(sdp: "v=0\r\n"),
            .candidate(.candidate(mlineIndex: 0, candidate: "candidate:1 1 UDP 1 10.0.0.2 5000 typ host")),
            .candidate(.completed),
            .state(ice: .connected, connection: "connecting"),
            .state(ice: .checking, connection: nil),
            .talking(true, level: 12),
            .unavailable(reason: "missing element webrtcbin"),
            .error(message: "ICE failed"),
        ]
        for message in messages {
            #expect(try MediaMessage.received(from: message.json) == .message(message, ignoredFields: []))
        }
    }

    @Test func statesAndLevelsOutsideTheProtocolAreProtocolErrors() {
        for text in [#"{"type":"state","ice":"dreaming"}"#, #"{"type":"talking","talking":true,"level":128}"#,
                     #"{"type":"talking","talking":true,"level":-1}"#, #"{"type":"ready","elements":{"webrtcdsp":"yes"}}"#] {
            #expect(throws: VoiceMediaProtocolError.self, "\(text)") { try MediaMessage.received(from: JSONValue.parse(text)) }
        }
    }

    @Test func theWireFormIsTheProtocols() {
        #expect(MediaMessage.talking(false, level: 127).json.jsonText == #"{"level":127,"talking":false,"type":"talking"}"#)
        #expect(MediaMessage.state(ice: .failed, connection: nil).json.jsonText == #"{"ice":"failed","type":"state"}"#)
    }
}
