import IPCProtocol
import JSONValue
import Testing
import VoiceMediaProtocol
@testable import InteractiveDaemon

/// A deterministic random source for the reconnection jitter.
struct VoiceTestRandom: RandomNumberGenerator, Sendable {
    var state: UInt64 = 0x1234_5678

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}

/// Drives a `VoiceCore` on a test clock, plays the voice server and the media process, and keeps
/// every effect. Janus' replies are written as Janus 1.1.2 writes them (`janus.c`,
/// `janus_audiobridge.c`).
struct VoiceHarness {
    static let t0 = ContinuousClock.now
    static let url = "ws://127.0.0.1:8188/"
    static let sessionId: UInt64 = 4_513_237_181_190_111
    static let handleId: UInt64 = 7_111_224_983_300_122
    static let offer = "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 96\r\n"
    static let answer = "v=0\r\no=- 2 0 IN IP4 10.0.0.1\r\ns=-\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"

    var core: VoiceCore
    var now = VoiceHarness.t0
    /// Every effect so far, and those of the last input.
    var all: [VoiceEffect] = []
    var last: [VoiceEffect] = []
    /// The timers armed, as the shell would keep them.
    var timers: [VoiceTimer: ContinuousClock.Instant] = [:]
    var nextRequest = 0

    init(settings: VoiceSettings = VoiceSettings(url: VoiceHarness.url)) {
        core = VoiceCore(settings: settings, random: VoiceTestRandom())
    }

    // MARK: Inputs

    @discardableResult
    mutating func input(_ input: VoiceInput) -> [VoiceEffect] {
        last = core.handle(input, now: now)
        all += last
        for effect in last {
            switch effect {
            case .schedule(let timer, let at): timers[timer] = at
            case .cancel(let timer): timers[timer] = nil
            default: break
            }
        }
        return last
    }

    /// Moves the clock on by `duration`, firing the timers due on the way, earliest first. A live
    /// server (`serverAnswers`) acks each keepalive.
    @discardableResult
    mutating func advance(by duration: Duration, serverAnswers: Bool = true) -> [VoiceEffect] {
        let end = now + duration
        var fired: [VoiceEffect] = []
        while let (timer, at) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            timers[timer] = nil
            now = at
            let effects = input(.timerFired(timer))
            fired += effects
            for case .sendJanus(let socket, let request) in effects where serverAnswers {
                guard case .keepalive(let session) = request.kind else { continue }
                let ack: JSONValue = ["janus": "ack", "session_id": .number(Double(session)), "transaction": .string(request.transaction)]
                input(.janusReceived(socket, ack.jsonText))
            }
        }
        now = end
        last = fired
        return fired
    }

    mutating func newRequest() -> VoiceRequestID {
        nextRequest += 1
        return VoiceRequestID(value: nextRequest)
    }

    @discardableResult
    mutating func join(_ room: String = "movie-night", display: String? = "Lan", muted: Bool = false, pin: String? = nil,
                       timeoutMs: Int? = nil) -> VoiceRequestID {
        let request = newRequest()
        input(.join(VoiceJoinParams(room: room, display: display, muted: muted, pin: pin, timeoutMs: timeoutMs), request))
        return request
    }

    // MARK: The voice server

    /// The WebSocket opened last.
    var socket: VoiceSocketID? {
        for case .openSocket(let socket, _) in all.reversed() { return socket }
        return nil
    }

    /// The requests sent on any socket, in order.
    var sent: [JanusRequest] { all.compactMap { if case .sendJanus(_, let request) = $0 { return request } else { return nil } } }
    var sentLast: [JanusRequest] { last.compactMap { if case .sendJanus(_, let request) = $0 { return request } else { return nil } } }

    /// The last request sent that `matches`.
    func request(_ matches: (JanusRequest.Kind) -> Bool) -> JanusRequest? { sent.last { matches($0.kind) } }

    func lastMessage(_ name: String) -> JanusRequest? {
        request { if case .message(_, _, let body, _) = $0 { return body.name == name } else { return false } }
    }

    /// Janus sends `json` on the current WebSocket.
    @discardableResult
    mutating func server(_ json: JSONValue) -> [VoiceEffect] {
        guard let socket else { return [] }
        return input(.janusReceived(socket, json.jsonText))
    }

    /// The AudioBridge's plugin data.
    static func plugin(_ data: JSONValue) -> JSONValue { ["plugin": "janus.plugin.audiobridge", "data": data] }

    /// A synchronous plugin answer to `request`.
    mutating func pluginSuccess(_ request: JanusRequest?, _ data: JSONValue, handle: UInt64 = VoiceHarness.handleId) {
        server(["janus": "success", "session_id": .number(Double(Self.sessionId)), "transaction": .string(request?.transaction ?? ""),
                "sender": .number(Double(handle)), "plugindata": Self.plugin(data)])
    }

    /// An asynchronous plugin answer to `request` (ack, then the event).
    mutating func pluginEvent(_ request: JanusRequest?, _ data: JSONValue, jsep: JSONValue? = nil, handle: UInt64 = VoiceHarness.handleId) {
        let transaction = JSONValue.string(request?.transaction ?? "")
        server(["janus": "ack", "session_id": .number(Double(Self.sessionId)), "transaction": transaction])
        var event: JSONObject = ["janus": "event", "session_id": .number(Double(Self.sessionId)), "transaction": transaction,
                                          "sender": .number(Double(handle)), "plugindata": Self.plugin(data)]
        if let jsep { event["jsep"] = jsep }
        server(.object(event))
    }

    /// An AudioBridge event no request asked for.
    @discardableResult
    mutating func roomEvent(_ data: JSONValue, handle: UInt64 = VoiceHarness.handleId) -> [VoiceEffect] {
        server(["janus": "event", "session_id": .number(Double(Self.sessionId)), "sender": .number(Double(handle)),
                "plugindata": Self.plugin(data)])
    }

    /// Opens the WebSocket and makes a session (with `info`) and a handle.
    mutating func connect(sessionTimeout: Int = 60, session: UInt64 = VoiceHarness.sessionId, handle: UInt64 = VoiceHarness.handleId) {
        guard let socket else { return }
        input(.socketOpened(socket))
        let info = request { $0 == .info }
        server(["janus": "server_info", "transaction": .string(info?.transaction ?? ""), "name": "Janus WebRTC Server",
                "version": 1102, "session-timeout": .number(Double(sessionTimeout)), "reclaim-session-timeout": 0])
        createSession(session, handle: handle)
    }

    mutating func createSession(_ session: UInt64 = VoiceHarness.sessionId, handle: UInt64 = VoiceHarness.handleId) {
        let create = request { $0 == .create }
        server(["janus": "success", "transaction": .string(create?.transaction ?? ""), "data": ["id": .number(Double(session))]])
        attach(handle)
    }

    mutating func attach(_ handle: UInt64 = VoiceHarness.handleId) {
        let attach = request { if case .attach = $0 { return true } else { return false } }
        server(["janus": "success", "session_id": .number(Double(Self.sessionId)), "transaction": .string(attach?.transaction ?? ""),
                "data": ["id": .number(Double(handle))]])
    }

    // MARK: The media process

    /// The media process started last.
    var mediaId: VoiceMediaID? {
        for case .startMedia(let id) in all.reversed() { return id }
        return nil
    }

    var mediaCommands: [DaemonMessage] {
        all.compactMap { if case .sendMedia(let id, let command) = $0, id == mediaId { return command } else { return nil } }
    }

    /// The media process starts and its pipeline plays.
    mutating func mediaReady() {
        guard let id = mediaId else { return }
        input(.mediaStarted(id))
        input(.media(id, .ready(elements: ["webrtcbin": true, "webrtcdsp": true])))
    }

    mutating func mediaSays(_ event: MediaMessage) {
        guard let id = mediaId else { return }
        input(.media(id, event))
    }

    /// `exists` (true), then `join` answered with `joined` as `selfId` with `others`.
    mutating func enterRoom(selfId: UInt64 = 501, others: [JSONValue] = [], exists: Bool = true, handle: UInt64 = VoiceHarness.handleId) {
        pluginSuccess(lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": .bool(exists)], handle: handle)
        pluginEvent(lastMessage("join"), ["audiobridge": "joined", "room": "movie-night", "id": .number(Double(selfId)),
                                          "display": "Lan", "participants": .array(others)], handle: handle)
    }

    /// The offer goes with `configure`, the answer comes back.
    mutating func negotiate(handle: UInt64 = VoiceHarness.handleId) {
        mediaSays(.offer(sdp: Self.offer))
        pluginEvent(lastMessage("configure"), ["audiobridge": "event", "room": "movie-night", "result": "ok"],
                    jsep: ["type": "answer", "sdp": .string(Self.answer)], handle: handle)
    }

    /// Connected, media ready, in the room with `others`; the offer not made yet.
    static func inRoom(others: [JSONValue] = [], pin: String? = nil, settings: VoiceSettings = VoiceSettings(url: VoiceHarness.url),
                       sessionTimeout: Int = 60) -> VoiceHarness {
        var harness = VoiceHarness(settings: settings)
        harness.join(pin: pin)
        harness.connect(sessionTimeout: sessionTimeout)
        harness.mediaReady()
        harness.enterRoom(others: others)
        return harness
    }

    /// A whole join: in the room with `others`, negotiated.
    static func joined(others: [JSONValue] = [Self.peer(601, "Minh"), Self.peer(602, "Thu", muted: true)], pin: String? = nil,
                       settings: VoiceSettings = VoiceSettings(url: VoiceHarness.url), sessionTimeout: Int = 60) -> VoiceHarness {
        var harness = inRoom(others: others, pin: pin, settings: settings, sessionTimeout: sessionTimeout)
        harness.negotiate()
        return harness
    }

    static func peer(_ id: Int, _ display: String, muted: Bool = false, setup: Bool = true) -> JSONValue {
        ["id": .number(Double(id)), "display": .string(display), "setup": .bool(setup), "muted": .bool(muted)]
    }

    // MARK: What came out

    var states: [VoiceStateEvent] { last.compactMap { if case .state(let event) = $0 { return event } else { return nil } } }
    var allStates: [VoiceStateEvent] { all.compactMap { if case .state(let event) = $0 { return event } else { return nil } } }
    var peers: [VoicePeerEvent] { last.compactMap { if case .peer(let event) = $0 { return event } else { return nil } } }
    var talking: [VoiceTalkingEvent] { last.compactMap { if case .talking(let event) = $0 { return event } else { return nil } } }
    var logs: [VoiceLogLine] { all.compactMap { if case .log(let line) = $0 { return line } else { return nil } } }

    func reply(to request: VoiceRequestID) -> Result<JSONValue, RPCError>? {
        for case .reply(let id, let result) in all where id == request { return result }
        return nil
    }

    func error(of request: VoiceRequestID) -> RPCError? {
        if case .failure(let error)? = reply(to: request) { return error }
        return nil
    }
}

/// The voice core's way into a room and what it does there (IPC.md, Voice rooms).
@Suite struct VoiceCoreTests {
    // MARK: Joining

    @Test func theHappyPathJoinsWithSelfIdAndParticipants() throws {
        var voice = VoiceHarness(settings: VoiceSettings(url: VoiceHarness.url,
                                                         credentials: JanusCredentials(apiSecret: "s3cret", token: "t0ken")))
        let request = voice.join()
        #expect(voice.states.map(\.state) == [.connecting])
        #expect(voice.last.contains(.openSocket(VoiceSocketID(value: 1), url: VoiceHarness.url)))
        #expect(voice.last.contains(.startMedia(VoiceMediaID(value: 1))))
        #expect(voice.timers[.joinReply(request)] == VoiceHarness.t0 + .seconds(10))

        voice.input(.socketOpened(try #require(voice.socket)))
        #expect(voice.sentLast.map(\.kind) == [.info])
        voice.connect()
        #expect(voice.sent.map(\.kind) == [.info, .create, .attach(session: VoiceHarness.sessionId)])
        // Every request carries the secret and the token.
        for request in voice.sent {
            #expect(request.json["apisecret"] == "s3cret" && request.json["token"] == "t0ken")
        }
        // Nothing of the room goes out before the media process's pipeline plays.
        #expect(voice.lastMessage("exists") == nil)
        voice.mediaReady()
        #expect(voice.mediaCommands == [.start(MediaStart(source: "autoaudiosrc", sink: "autoaudiosink", echoCancel: true, ice: [],
                                                          muted: false))])
        let exists = try #require(voice.lastMessage("exists"))
        #expect(exists.json["body"] == ["request": "exists", "room": "movie-night"])
        #expect(exists.json["session_id"] == .number(Double(VoiceHarness.sessionId)))
        #expect(exists.json["handle_id"] == .number(Double(VoiceHarness.handleId)))

        voice.enterRoom(others: [VoiceHarness.peer(601, "Minh"), VoiceHarness.peer(602, "Thu", muted: true)])
        #expect(voice.lastMessage("join")?.json["body"] == ["request": "join", "room": "movie-night", "display": "Lan", "muted": false])
        #expect(voice.states == [VoiceStateEvent(room: "movie-night", state: .joined, selfId: "501", muted: false, participants: 3)])
        let status = try #require(voice.core.status)
        #expect(status.selfId == "501")
        #expect(status.participants == [
            VoiceParticipant(peerId: "501", display: "Lan", muted: false, talking: false),
            VoiceParticipant(peerId: "601", display: "Minh", muted: false, talking: false),
            VoiceParticipant(peerId: "602", display: "Thu", muted: true, talking: false),
        ])
        #expect(voice.reply(to: request) == .success(status.json))
        #expect(voice.timers[.joinReply(request)] == nil)
        // The initial list is in the reply and the status; no voice.peer for those already there.
        #expect(voice.peers.isEmpty)

        voice.negotiate()
        let configure = try #require(voice.lastMessage("configure"))
        #expect(configure.json["body"] == ["request": "configure", "muted": false])
        #expect(configure.json["jsep"] == ["type": "offer", "sdp": .string(VoiceHarness.offer)])
        #expect(voice.mediaCommands.last == .answer(sdp: VoiceHarness.answer))
    }

    @Test func aRoomThatDoesNotExistIsCreatedThenJoined() throws {
        var voice = VoiceHarness()
        voice.join("1234")
        voice.connect()
        voice.mediaReady()
        #expect(voice.lastMessage("exists")?.json["body"]?["room"] == 1234)
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": 1234, "exists": false])
        let create = try #require(voice.lastMessage("create"))
        #expect(create.json["body"] == ["request": "create", "room": 1234, "permanent": false, "audiolevel_event": true])
        voice.pluginSuccess(create, ["audiobridge": "created", "room": 1234, "permanent": false])
        #expect(voice.lastMessage("join") != nil)
    }

    @Test func aRoomSomeoneElseCreatedMeanwhileIsJoined() throws {
        var voice = VoiceHarness()
        voice.join()
        voice.connect()
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": false])
        voice.pluginSuccess(voice.lastMessage("create"), ["audiobridge": "event", "error_code": 486, "error": "Room movie-night already exists"])
        #expect(voice.lastMessage("join") != nil)
    }

    @Test func withoutCreatingRoomsAMissingRoomIsNoRoom() throws {
        var voice = VoiceHarness(settings: VoiceSettings(url: VoiceHarness.url, createRooms: false))
        let request = voice.join()
        voice.connect()
        voice.mediaReady()
        voice.pluginSuccess(voice.lastMessage("exists"), ["audiobridge": "success", "room": "movie-night", "exists": false])
        #expect(voice.error(of: request)?.name == "interactive.NoRoom")
        #expect(voice.lastMessage("create") == nil && voice.lastMessage("join") == nil)
        #expect(voice.core.status?.state == .error)
    }

    @Test func withoutVoiceUrlTheJoinIsNotConfigured() {
        var voice = VoiceHarness(settings: VoiceSettings(url: nil))
        let request = voice.join()
        let error = voice.error(of: request)
        #expect(error?.name == "interactive.NotConfigured")
        #expect(error?.data?["missing"] == ["voiceUrl"])
        #expect(voice.all.count == 1)
    }

    @Test func theDisplayDefaultsToTheViewersNameElseViewer() {
        var voice = VoiceHarness()
        voice.join(display: nil)
        #expect(voice.core.room?.display == "Viewer")
        var named = VoiceHarness()
        named.input(.viewerDisplayName("Hoa"))
        named.join(display: nil)
        #expect(named.core.room?.display == "Hoa")
    }

    @Test func theJoinRepliesConnectingAfterTimeoutMsAndKeepsTrying() throws {
        var voice = VoiceHarness()
        let request = voice.join(timeoutMs: 3000)
        voice.connect()
        voice.advance(by: .seconds(3))
        let reply = try #require(voice.reply(to: request))
        #expect(try reply.get()["state"] == "connecting")
        // It keeps going: the room is joined later, and voice.state says so.
        voice.mediaReady()
        voice.enterRoom()
        #expect(voice.states.map(\.state) == [.joined])
        #expect(voice.all.filter { if case .reply(request, _) = $0 { return true } else { return false } }.count == 1)
    }

    // MARK: Participants

    @Test func peersJoinLeaveChangeAndAreKicked() throws {
        var voice = VoiceHarness.joined()
        voice.roomEvent(["audiobridge": "joined", "room": "movie-night",
                         "participants": [["id": 603, "display": "Phuong", "setup": false, "muted": false]]])
        #expect(voice.peers == [VoicePeerEvent(room: "movie-night", peerId: "603", display: "Phuong", event: .joined, muted: false)])
        // Its PeerConnection comes up: no change players see.
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "participants": [VoiceHarness.peer(603, "Phuong")]])
        #expect(voice.peers.isEmpty)
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "participants": [VoiceHarness.peer(603, "Phuong", muted: true)]])
        #expect(voice.peers == [VoicePeerEvent(room: "movie-night", peerId: "603", display: "Phuong", event: .updated, muted: true)])
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "leaving": 601])
        #expect(voice.peers == [VoicePeerEvent(room: "movie-night", peerId: "601", display: "Minh", event: .left, muted: false,
                                               reason: .left)])
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "kicked": 602])
        #expect(voice.peers == [VoicePeerEvent(room: "movie-night", peerId: "602", display: "Thu", event: .left, muted: true,
                                               reason: .kicked)])
        // Janus tells the others of a kick twice (kicked, then leaving): the second is nothing new.
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "leaving": 602])
        #expect(voice.peers.isEmpty)
        #expect(voice.core.status?.participants.map(\.peerId) == ["501", "603"])
    }

    @Test func talkingComesFromTheServerForPeersAndFromTheMediaProcessForThisBox() throws {
        var voice = VoiceHarness.joined()
        voice.roomEvent(["audiobridge": "talking", "room": "movie-night", "id": 601])
        #expect(voice.talking == [VoiceTalkingEvent(room: "movie-night", peerId: "601", talking: true)])
        voice.roomEvent(["audiobridge": "talking", "room": "movie-night", "id": 601])
        #expect(voice.talking.isEmpty)
        voice.roomEvent(["audiobridge": "stopped-talking", "room": "movie-night", "id": 601])
        #expect(voice.talking == [VoiceTalkingEvent(room: "movie-night", peerId: "601", talking: false)])
        // Janus' talking for this box is ignored; its media process says it first hand.
        voice.roomEvent(["audiobridge": "talking", "room": "movie-night", "id": 501])
        #expect(voice.talking.isEmpty)
        voice.mediaSays(.talking(true, level: 30))
        #expect(voice.talking == [VoiceTalkingEvent(room: "movie-night", peerId: "501", talking: true)])
        #expect(voice.core.status?.participants.first?.talking == true)
        // A peer that leaves while talking stops talking.
        voice.roomEvent(["audiobridge": "talking", "room": "movie-night", "id": 602])
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "leaving": 602])
        #expect(voice.talking == [VoiceTalkingEvent(room: "movie-night", peerId: "602", talking: false)])
    }

    // MARK: Mute

    @Test func muteTellsTheServerAndClosesTheValveAndUnmuteUndoesBoth() throws {
        var voice = VoiceHarness.joined()
        voice.mediaSays(.talking(true, level: 30))
        let request = voice.newRequest()
        voice.input(.mute(true, request))
        #expect(voice.last.contains(.sendMedia(try #require(voice.mediaId), .mute(true))))
        #expect(voice.sentLast.map(\.json).map { $0["body"] } == [["request": "configure", "muted": true]])
        #expect(voice.sentLast.first?.json["jsep"] == nil)
        #expect(voice.states.map(\.muted) == [true])
        // Muted is never talking.
        #expect(voice.talking == [VoiceTalkingEvent(room: "movie-night", peerId: "501", talking: false)])
        #expect(voice.reply(to: request) == .success(["room": "movie-night", "muted": true]))
        voice.pluginEvent(voice.lastMessage("configure"), ["audiobridge": "event", "room": "movie-night", "result": "ok"])
        #expect(voice.core.status?.state == .joined)

        voice.input(.mute(false, voice.newRequest()))
        #expect(voice.last.contains(.sendMedia(try #require(voice.mediaId), .mute(false))))
        #expect(voice.sentLast.map(\.json).map { $0["body"] } == [["request": "configure", "muted": false]])
        #expect(voice.states.map(\.muted) == [false])
    }

    @Test func muteBeforeTheRoomIsJoinedGoesWithTheJoin() throws {
        var voice = VoiceHarness()
        voice.join()
        voice.input(.mute(true, voice.newRequest()))
        voice.connect()
        voice.mediaReady()
        #expect(voice.mediaCommands.first == .start(MediaStart(source: "autoaudiosrc", sink: "autoaudiosink", echoCancel: true,
                                                               ice: [], muted: true)))
        voice.enterRoom()
        #expect(voice.lastMessage("join")?.json["body"]?["muted"] == true)
        voice.negotiate()
        #expect(voice.lastMessage("configure")?.json["body"]?["muted"] == true)
        #expect(voice.sent.filter { if case .message(_, _, .configure, _) = $0.kind { return true } else { return false } }.count == 1)
    }

    @Test func muteAndLeaveWithoutARoomAreNoRoom() {
        var voice = VoiceHarness()
        let mute = voice.newRequest()
        voice.input(.mute(true, mute))
        let leave = voice.newRequest()
        voice.input(.leave(leave))
        #expect(voice.error(of: mute)?.name == "interactive.NoRoom")
        #expect(voice.error(of: leave)?.name == "interactive.NoRoom")
    }

    // MARK: Leaving, another room, the same room

    @Test func leaveLeavesTheServerStopsTheMediaAndSaysLeft() throws {
        var voice = VoiceHarness.joined()
        let media = try #require(voice.mediaId)
        let socket = try #require(voice.socket)
        let request = voice.newRequest()
        voice.input(.leave(request))
        #expect(voice.sentLast.map(\.kind) == [
            .message(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId, .leave, offer: nil),
            .destroy(session: VoiceHarness.sessionId),
        ])
        #expect(voice.last.contains(.closeSocket(socket)))
        #expect(voice.last.contains(.stopMedia(media)))
        #expect(voice.last.contains(.cancel(.keepalive)))
        #expect(voice.states == [VoiceStateEvent(room: "movie-night", state: .left, selfId: nil, muted: false, participants: 0,
                                                 reason: .left)])
        #expect(voice.reply(to: request) == .success(["room": "movie-night", "state": "left"]))
        #expect(voice.core.status == VoiceStatus(room: "movie-night", state: .left, selfId: nil, muted: false, participants: []))
        // What the closed socket and the stopped process still report changes nothing.
        voice.input(.socketClosed(socket, reason: "closed"))
        voice.input(.mediaExited(media, .exited(status: 0)))
        voice.advance(by: .seconds(120))
        #expect(voice.last.isEmpty)
    }

    @Test func joiningAnotherRoomLeavesTheFirstOnTheSameSession() throws {
        var voice = VoiceHarness.joined()
        let firstMedia = try #require(voice.mediaId)
        let first = voice.join("quiz-room", timeoutMs: 5000)
        #expect(voice.sentLast.map(\.kind) == [
            .message(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId, .leave, offer: nil),
            .detach(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId),
            .attach(session: VoiceHarness.sessionId),
        ])
        #expect(voice.last.contains(.stopMedia(firstMedia)))
        #expect(voice.states.map(\.state) == [.left, .connecting])
        #expect(voice.states.first?.reason == .replaced)
        #expect(voice.states.last?.room == "quiz-room")
        #expect(!voice.last.contains { if case .openSocket = $0 { return true } else { return false } })
        let second = voice.join("cooking", timeoutMs: 5000)
        // The join still waiting is answered: another took its place.
        #expect(try voice.reply(to: first)?.get() == VoiceStatus(room: "quiz-room", state: .left, selfId: nil, muted: false,
                                                                  participants: []).json)
        voice.attach(7_000_000_000_001)
        voice.mediaReady()
        #expect(voice.lastMessage("exists")?.json["body"]?["room"] == "cooking")
        #expect(voice.reply(to: second) == nil)
    }

    @Test func joiningTheSameRoomIsANoOpButForMuted() throws {
        var voice = VoiceHarness.joined()
        let again = voice.join()
        #expect(voice.sentLast.isEmpty && voice.states.isEmpty)
        #expect(try voice.reply(to: again)?.get()["state"] == "joined")
        let muted = voice.join(muted: true)
        #expect(voice.sentLast.map(\.json).map { $0["body"] } == [["request": "configure", "muted": true]])
        #expect(voice.last.contains(.sendMedia(try #require(voice.mediaId), .mute(true))))
        #expect(try voice.reply(to: muted)?.get()["muted"] == true)
    }

    @Test func aDestroyedRoomIsClosed() throws {
        var voice = VoiceHarness.joined()
        let media = try #require(voice.mediaId)
        voice.roomEvent(["audiobridge": "destroyed", "room": "movie-night"])
        #expect(voice.states == [VoiceStateEvent(room: "movie-night", state: .closed, selfId: nil, muted: false, participants: 0,
                                                 reason: .destroyed)])
        #expect(voice.last.contains(.stopMedia(media)))
        voice.advance(by: .seconds(60))
        #expect(voice.last.isEmpty)
    }

    @Test func aKickedBoxLeavesAndDoesNotComeBack() throws {
        var voice = VoiceHarness.joined()
        voice.roomEvent(["audiobridge": "event", "room": "movie-night", "kicked": 501])
        #expect(voice.states.map(\.state) == [.left])
        #expect(voice.states.first?.reason == .kicked)
        voice.advance(by: .seconds(60))
        #expect(voice.last.isEmpty)
    }

    // MARK: Candidates

    @Test func candidatesTrickleBothWaysEndingWithCompleted() throws {
        var voice = VoiceHarness.inRoom()
        // Local candidates before the offer is sent wait for it.
        voice.mediaSays(.candidate(.candidate(mlineIndex: 0, candidate: "candidate:1 1 UDP 2015363327 10.0.0.2 40000 typ host")))
        #expect(voice.sentLast.isEmpty)
        voice.mediaSays(.offer(sdp: VoiceHarness.offer))
        #expect(voice.sentLast.map(\.kind) == [
            .message(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId, .configure(muted: false), offer: VoiceHarness.offer),
            .trickle(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId,
                     .candidate(mlineIndex: 0, candidate: "candidate:1 1 UDP 2015363327 10.0.0.2 40000 typ host")),
        ])
        voice.mediaSays(.candidate(.completed))
        #expect(voice.sentLast.map { $0.json["candidate"] } == [["completed": true]])
        // Remote candidates before the answer wait for it.
        voice.server(["janus": "trickle", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId)),
                      "candidate": ["sdpMid": "0", "sdpMLineIndex": 0, "candidate": "candidate:2 1 udp 2013266431 10.0.0.1 20000 typ host"]])
        #expect(voice.mediaCommands.count == 1)
        voice.pluginEvent(voice.lastMessage("configure"), ["audiobridge": "event", "room": "movie-night", "result": "ok"],
                          jsep: ["type": "answer", "sdp": .string(VoiceHarness.answer)])
        #expect(voice.mediaCommands.suffix(2) == [
            .answer(sdp: VoiceHarness.answer),
            .candidate(.candidate(mlineIndex: 0, candidate: "candidate:2 1 udp 2013266431 10.0.0.1 20000 typ host")),
        ])
        voice.server(["janus": "trickle", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId)), "candidate": ["completed": true]])
        #expect(voice.mediaCommands.last == .candidate(.completed))
        voice.server(["janus": "webrtcup", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId))])
        #expect(voice.logs.last == .mediaUp)
        voice.server(["janus": "media", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId)), "mid": "0", "type": "audio", "receiving": true])
        #expect(voice.logs.last == .serverReceives(true))
    }

    // MARK: Keepalives

    @Test(arguments: [(60, 15), (30, 10), (10, 3.333), (0, 15), (120, 15)])
    func keepalivesGoAtLeastEveryFifteenSecondsAndThreeTimesPerTimeout(_ timeout: Int, _ every: Double) throws {
        var voice = VoiceHarness.joined(sessionTimeout: timeout)
        let interval = Duration.milliseconds(Int64((every * 1000).rounded(.down)))
        #expect(voice.core.link.keepaliveEvery == interval)
        let sent = voice.sent.count
        voice.advance(by: interval * 3)
        let keepalives = voice.sent.dropFirst(sent).filter { $0.kind == .keepalive(session: VoiceHarness.sessionId) }
        #expect(keepalives.count == 3)
        // Janus acks them; nothing else happens.
        for keepalive in keepalives {
            voice.server(["janus": "ack", "session_id": .number(Double(VoiceHarness.sessionId)), "transaction": .string(keepalive.transaction)])
            #expect(voice.last.isEmpty)
        }
    }
}
