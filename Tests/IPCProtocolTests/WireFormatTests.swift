import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Pins the typed local API to docs/ipc.md: every example exchange and every event example of
/// the doc is read, decoded into the typed values, encoded again and compared with the doc's
/// text (replies and event lines byte for byte; request params and event data member for member,
/// the doc writing them in no particular order).
@Suite struct WireFormatTests {
    /// The typed params (and so the typed result) of every method.
    static let paramsTypes: [IPCMethod: any MethodParams.Type] = [
        .daemonHello: HelloParams.self, .daemonStatus: DaemonStatusParams.self, .daemonReload: DaemonReloadParams.self,
        .configGet: ConfigGetParams.self, .configSet: ConfigSetParams.self, .sessionLogin: SessionLoginParams.self,
        .sessionLogout: SessionLogoutParams.self, .roomJoin: RoomJoinParams.self, .roomLeave: RoomLeaveParams.self,
        .playerTime: PlayerTimeParams.self, .playerState: PlayerStateParams.self, .playerViewport: Viewport.self,
        .overlayAttached: OverlayAttachedParams.self, .overlayRendered: OverlayRenderedParams.self,
        .overlayBridge: OverlayBridgeParams.self, .overlayDismiss: OverlayDismissParams.self,
        .answerConfirm: AnswerConfirmParams.self, .predictOpen: PredictOpenParams.self,
        .eventsSubscribe: EventsSubscribeParams.self, .eventsUnsubscribe: EventsUnsubscribeParams.self,
        .interactiveStatus: InteractiveStatusParams.self, .leaderboardURL: LeaderboardURLParams.self,
        .playbackStart: PlaybackStartParams.self, .playbackError: PlaybackErrorParams.self,
        .playbackForeground: PlaybackForegroundParams.self, .playbackStop: PlaybackStopParams.self,
        .voiceJoin: VoiceJoinParams.self, .voiceLeave: VoiceLeaveParams.self, .voiceMute: VoiceMuteParams.self,
    ]

    /// The typed data of every event.
    static let eventTypes: [any EventData.Type] = [
        ConnectionStateEvent.self, RoomStateEvent.self, SessionState.self, ConfigChangedEvent.self, OverlayShow.self,
        OverlayRevealEvent.self, OverlayHideEvent.self, OverlayPostEvent.self, OverlayLinkEvent.self, PlayerControlsEvent.self,
        LoginRequiredEvent.self, FanclubRequiredEvent.self, AnswerConfirmEvent.self, AnswerResultEvent.self,
        PredictButtonEvent.self, EventsLaggedEvent.self, PlaybackStateEvent.self, PlaybackPlayEvent.self, PlaybackPreloadEvent.self,
        VoiceStateEvent.self, VoicePeerEvent.self, VoiceTalkingEvent.self,
    ]

    static let doc: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/ipc.md"), encoding: .utf8)) ?? ""
    }()

    /// The doc's example lines that are JSON (`…` marks elided ones, which are not), in order.
    static var exchangeLines: [(arrow: Character, text: String, value: JSONValue)] {
        doc.split(separator: "\n").compactMap { line in
            let trimmed = line.drop { $0 == " " }
            guard let arrow = trimmed.first, arrow == "→" || arrow == "←" else { return nil }
            let text = String(trimmed.dropFirst().drop { $0 == " " })
            guard let value = try? JSONValue.parse(text) else { return nil }
            return (arrow, text, value)
        }
    }

    @Test func everyMethodAndEventHasItsType() {
        #expect(Set(Self.paramsTypes.keys) == Set(IPCMethod.allCases))
        for (method, type) in Self.paramsTypes { #expect(type.method == method) }
        #expect(Set(Self.eventTypes.map { $0.type }).count == 22)
    }

    @Test func everyRequestExampleDecodesAndEncodesBack() throws {
        var checked = 0
        for line in Self.exchangeLines where line.arrow == "→" {
            guard let method = line.value["method"]?.stringValue.flatMap(IPCMethod.init(rawValue:)) else { continue }
            let type = try #require(Self.paramsTypes[method])
            try Self.checkRequest(type, params: line.value["params"], line: line.text)
            checked += 1
        }
        #expect(checked >= 40)
    }

    @Test func everyReplyExampleIsWhatTheTypedResultWrites() throws {
        var methods: [JSONValue: IPCMethod] = [:]
        var checked = 0
        for line in Self.exchangeLines {
            if line.arrow == "→" {
                if let id = line.value["id"], let method = line.value["method"]?.stringValue.flatMap(IPCMethod.init(rawValue:)) {
                    methods[id] = method
                }
                continue
            }
            guard let id = line.value["id"] else { continue }
            let written: [UInt8]
            if let result = line.value["result"] {
                let method = try #require(methods[id], "no request for \(line.text)")
                let type = try #require(Self.paramsTypes[method])
                let read = Self.result(type, result)
                let typed = try #require(read, "\(method.rawValue) result does not read: \(line.text)")
                written = RPCResponse(id: id, outcome: .success(typed)).line()
            } else {
                let error = try #require(line.value["error"].flatMap(RPCError.init(json:)))
                written = RPCResponse(id: id, outcome: .failure(error)).line()
            }
            #expect(String(decoding: written.dropLast(), as: UTF8.self) == line.text)
            checked += 1
        }
        #expect(checked >= 30)
    }

    @Test func everyEventLineIsWhatTheTypedDataWrites() throws {
        var checked = 0
        for line in Self.exchangeLines where line.arrow == "←" && line.value["method"] == .string(eventNotificationMethod) {
            let envelope = try #require(EventEnvelope(params: line.value["params"]))
            let type = try #require(Self.eventTypes.first { $0.type == envelope.type })
            let read = Self.data(type, envelope.data)
            let data = try #require(read, "\(envelope.type) does not read: \(line.text)")
            let written = EventEnvelope(bootId: envelope.bootId, seq: envelope.seq, type: envelope.type, time: envelope.time, data: data).line()
            #expect(String(decoding: written.dropLast(), as: UTF8.self) == line.text)
            checked += 1
        }
        #expect(checked >= 2)
    }

    /// The events tables: `| type | data | example |`, the example being the data.
    @Test func everyEventTableExampleDecodesAndEncodesBack() throws {
        var seen: Set<String> = []
        for row in Self.doc.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let type = Self.eventTypes.first(where: { "`\($0.type)`" == cells[0] }) else { continue }
            let example = cells[2]
            guard example.hasPrefix("`{"), example.hasSuffix("}`"), let value = try? JSONValue.parse(String(example.dropFirst().dropLast()))
            else { continue }
            let read = Self.data(type, value)
            let data = try #require(read, "\(type.type) does not read: \(example)")
            #expect(data == value, "\(type.type)")
            seen.insert(type.type)
        }
        // overlay.show's example elides `raw`: OverlayShowWireTests pins it.
        #expect(seen.count == Self.eventTypes.count - 1, "\(Set(Self.eventTypes.map { $0.type }).subtracting(seen))")
    }

    /// Decodes the params, checks that they encode back to what the doc sent (members the doc
    /// leaves out may be written with their default) and that the encoding reads the same.
    private static func checkRequest<Params: MethodParams>(_: Params.Type, params: JSONValue?, line: String) throws {
        let typed = try Params(params: params)
        let encoded = typed.params
        for (name, value) in params?.objectValue ?? [:] {
            #expect(encoded?[name] == value, "\(Params.method.rawValue).\(name): \(line)")
        }
        #expect(try Params(params: encoded) == typed, "\(line)")
    }

    private static func result<Params: MethodParams>(_: Params.Type, _ json: JSONValue) -> JSONValue? {
        Params.Result(json: json)?.json
    }

    private static func data<Data: EventData>(_: Data.Type, _ json: JSONValue) -> JSONValue? {
        Data(data: json)?.data
    }
}

@Suite struct OverlayShowWireTests {
    @Test func overlayShowWritesTheDocsMembers() throws {
        let show = OverlayShow(overlayId: "ov-009c45-1", timelineId: "tl1", kind: "minigame",
                               url: "https://cdn/quiz.html?id=tl1&logged=true&duration=30",
                               placement: OverlayPlacement(location: 4, widthPct: 40, heightPct: 30), durationSec: 30,
                               raw: ["timelineId": "tl1"])
        #expect(show.data.jsonText == #"{"durationSec":30,"kind":"minigame","overlayId":"ov-009c45-1","placement":{"heightPct":30,"location":4,"widthPct":40},"raw":{"timelineId":"tl1"},"timelineId":"tl1","url":"https://cdn/quiz.html?id=tl1&logged=true&duration=30"}"#)
        #expect(OverlayShow(data: show.data) == show)
        var omitted = show
        omitted.raw = .null
        omitted.rawOmittedBytes = 20_000
        #expect(omitted.data["raw"] == .null && omitted.data["rawOmittedBytes"] == 20_000)
        #expect(OverlayShow(data: omitted.data) == omitted)
    }

    /// The display path writes `overlay.show` and `overlay.hide` without building `data`: the
    /// same bytes as `data.serialized()`, and the same line as the envelope of `data`.
    @Test func theDisplayPathsEventsWriteTheBytesOfTheirData() {
        let show = OverlayShow(overlayId: "ov-1", timelineId: "t\"1", kind: "predict", url: "https://cdn/q.html?a=1",
                               placement: OverlayPlacement(location: 2, widthPct: 12.5, heightPct: 100), durationSec: 0,
                               raw: ["timelineId": "t\"1", "position": ["alignment": 2, "width": 12.5], "targets": ["all"], "é": nil])
        var omitted = show
        omitted.raw = .null
        omitted.rawOmittedBytes = 20_000
        let hide = OverlayHideEvent(overlayId: "ov-1", timelineId: "t\n1", reason: "replaced")
        let events: [any EventData] = [show, omitted, hide]
        for event in events {
            var written: [UInt8] = Array("prefix ".utf8)
            event.writeData(to: &written)
            #expect(written == Array("prefix ".utf8) + event.data.serialized(), "\(type(of: event))")
            let line = EventEnvelope.line(bootId: "b", seq: 7, type: type(of: event).type, time: "t", writingData: event.writeData)
            #expect(line == EventEnvelope(bootId: "b", seq: 7, type: type(of: event).type, time: "t", data: event.data).line())
        }
    }

    @Test func aSuccessfulAnswerCarriesANullReasonAndTheBackendsData() {
        let success = AnswerResultEvent.success(overlayId: "ov-1", timelineId: "tl1", data: ["score": 3])
        #expect(success.data.jsonText == #"{"data":{"score":3},"overlayId":"ov-1","reason":null,"status":"success","timelineId":"tl1"}"#)
        let timeout = AnswerResultEvent.failure(overlayId: "ov-1", timelineId: "tl1", reason: "bet_declined", detail: "timeout")
        #expect(timeout.data.jsonText == #"{"detail":"timeout","overlayId":"ov-1","reason":"bet_declined","status":"failure","timelineId":"tl1"}"#)
    }

    /// Issue 20, item 8: observers get no token and no (possibly signed) subtitle URL.
    @Test func observersGetPlayTicketsWithoutTheTokenOrSubtitleURLs() {
        let play = PlaybackPlayEvent(filmId: "f1", episodeNo: 2, vid: "f1-e2", playAuthToken: "pat_secret", startAt: 42.5,
                                     subtitles: [["lang": "vi", "url": "https://cdn.example/sub.vtt?sig=SIGNED"]],
                                     expiresAt: "2026-11-30T10:17:51.990Z")
        #expect(play.redacted.data["playAuthToken"] == .null)
        #expect(!play.redacted.data.jsonText.contains("pat_secret"))
        #expect(play.redacted.data["subtitles"] == [["lang": "vi", "url": nil]])
        #expect(!play.redacted.data.jsonText.contains("SIGNED"))
        #expect(play.data["subtitles"] == [["lang": "vi", "url": "https://cdn.example/sub.vtt?sig=SIGNED"]], "players get them")
        #expect(PlaybackPreloadEvent(filmId: "f1", episodeNo: 3, vid: "f1-e3", playAuthToken: "pat_x").redacted.data["playAuthToken"] == .null)
    }

    @Test func theStatusReadsItsSectionsWithTheEventTypes() throws {
        // The overlay entry of the doc's daemon.status example.
        let overlay = #"{"durationSec":30,"kind":"minigame","overlayId":"ov-009c45-1","placement":{"heightPct":30,"location":4,"widthPct":40},"revealed":false,"shownAt":"2026-11-29T14:11:04.464Z","timelineId":"tl1","tracked":true,"url":"https://cdn/…/quiz.html?id=tl1&logged=true&duration=30"}"#
        let entry = try JSONValue.parse(overlay)
        #expect(OverlayStatus(json: entry)?.json.jsonText == overlay)
        let status = try #require(DaemonStatus(json: [
            "bootId": "9a8b", "overlays": [entry], "predict": [], "room": .null,
            "connection": ["attempt": 0, "error": .null, "retryInMs": .null, "socketId": "NVHG", "state": "connected"],
            "session": ["displayName": "Alice", "loggedIn": true, "userId": "alice"],
        ]))
        #expect(status.connection == ConnectionStateEvent(state: "connected", socketId: "NVHG"))
        #expect(status.room == nil && status.session?.userId == "alice" && status.overlays.map(\.overlayId) == ["ov-009c45-1"])
        #expect(DaemonStatus(json: ["overlays": []]) == nil)
    }

    @Test func connectionStatesWriteSocketIdOnlyWhenConnected() {
        #expect(ConnectionStateEvent(state: "idle").data.jsonText == #"{"attempt":0,"error":null,"retryInMs":null,"state":"idle"}"#)
        #expect(ConnectionStateEvent(state: "connected", socketId: "s1").data["socketId"] == "s1")
    }
}
