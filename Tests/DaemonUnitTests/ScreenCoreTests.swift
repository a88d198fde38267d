import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// The screen's decision core against test clocks: which overlays show, replace each other,
/// expire and hide, the players' reports, the web bridge and the player's controls.
@Suite struct ScreenCoreTests {
    /// OverlayManager performs the bookkeeping after a yield to the players' writers: what the
    /// screen, the expiry timer or the answer flow depend on must not be deferred with it (a
    /// timer armed late could replace a later decision's; an answer flow would not know its
    /// overlay left).
    @Test func onlyTrackingAndLogLinesWaitForThePlayers() throws {
        let record = OnScreenOverlay(overlayId: "o", overlay: try Self.overlay("tl"), url: "https://cdn.example/quiz.html",
                                     shownAt: Self.nowMs, trackingId: "t")
        let deferred: [ScreenEffect] = [.track(.shown(trackingId: "t")), .shown(record, replacing: []), .hidden(record, reason: .expired),
                                        .loadFailed(record, reason: nil), .postTooLarge(timelineId: "tl", key: "k", bytes: 1),
                                        .unknownBridgeMessage(overlayId: "o", type: "x")]
        let first: [ScreenEffect] = [.show(record, status: []), .hide(record, reason: .expired, status: []), .controls(visible: true),
                                     .overlayGone(overlayId: "o"), .armTimer(at: .now), .startAnswer(overlayId: "o", answer: 1),
                                     .loadAnswered(viewer: "v", mediaId: "m")]
        #expect(deferred.allSatisfy { $0.isBookkeeping })
        #expect(!first.contains { $0.isBookkeeping })
    }

    /// `overlay.show` carries the backend's payload up to `rawLimit` bytes of JSON; past it,
    /// `raw` is null and `rawOmittedBytes` says how large it was.
    @Test func aLargeRawPayloadIsLeftOutOfOverlayShow() throws {
        func show(withFiller filler: Int) throws -> OverlayShow {
            var members = try Self.overlay("tl").raw.objectValue ?? [:]
            members["filler"] = .string(String(repeating: "x", count: filler))
            let overlay = try #require(IncomingOverlay(payload: .object(members)))
            return OnScreenOverlay(overlayId: "o", overlay: overlay, url: "https://cdn.example/quiz.html", shownAt: Self.nowMs,
                                   trackingId: nil).showEvent
        }
        let base = try Self.overlay("tl").raw.serialized().count + #","filler":"""#.utf8.count
        let fits = try show(withFiller: OnScreenOverlay.rawLimit - base)
        #expect(fits.raw.serialized().count == OnScreenOverlay.rawLimit && fits.rawOmittedBytes == nil)
        let over = try show(withFiller: OnScreenOverlay.rawLimit - base + 1)
        #expect(over.raw == .null && over.rawOmittedBytes == OnScreenOverlay.rawLimit + 1)
    }

    /// The backend's overlay object goes to the players as it came (its text relayed, white
    /// space and key order kept), in either payload shape; text with a line break in its white
    /// space, which would end the event's line, is written again from the value.
    @Test func overlayShowRelaysTheBackendsTextOfTheOverlay() throws {
        func show(_ packet: String) throws -> (OverlayShow, [UInt8]) {
            let parsed = try JSONValue.parseWithElementRanges(Array(packet.utf8))
            let bytes = Array(packet.utf8)
            func text(_ member: String?) -> ArraySlice<UInt8>? {
                let range = member.map { parsed.ranges.member($0, ofElement: 1) } ?? parsed.ranges.elements.dropFirst().first
                return range.map { bytes[$0] }
            }
            let payload = try #require(parsed.value.arrayValue?.last)
            let overlay = try #require(IncomingOverlay(payload: payload, text: text))
            let event = OnScreenOverlay(overlayId: "o", overlay: overlay, url: "https://cdn.example/quiz.html", shownAt: Self.nowMs,
                                        trackingId: nil).showEvent
            var written: [UInt8] = []
            event.writeData(to: &written)
            return (event, written)
        }
        let wrapped = try show(#"["overlay",{"data": {"url":"https://cdn.example/quiz.html", "timelineId":"tl", "n":1.50},"_trackingId":"t"}]"#)
        #expect(wrapped.0.rawText.map { String(decoding: $0, as: UTF8.self) } == #"{"url":"https://cdn.example/quiz.html", "timelineId":"tl", "n":1.50}"#)
        let relayed = try JSONValue.parse(wrapped.1)
        #expect(relayed["raw"] == wrapped.0.raw && relayed["timelineId"] == "tl")
        let bare = try show(#"["overlay",{"timelineId":"tl","_trackingId":"t"}]"#)
        #expect(bare.0.rawText.map { String(decoding: $0, as: UTF8.self) } == #"{"timelineId":"tl","_trackingId":"t"}"#)
        let broken = try show("[\"overlay\",{\"data\":{\"timelineId\":\n\"tl\"}}]")
        #expect(broken.0.rawText == nil && !broken.1.contains(0x0A))
        #expect(try JSONValue.parse(broken.1)["raw"] == ["timelineId": "tl"])
    }

    static let t0 = ContinuousClock.now
    static let nowMs: Int64 = 1_796_032_000_000
    static let live = RoomKey(mediaId: "m1", mode: .live)
    static let vod = RoomKey(mediaId: "m1", mode: .vod)
    static let alice = ViewerSession(token: "token-alice", userId: "alice", displayName: nil)

    static func context(_ room: RoomKey = live, session: ViewerSession = alice, tenant: String = "onlivev2", fanclub: Bool = true,
                        os: String = "linuxstb") -> RoomContext {
        RoomContext(mediaId: room.mediaId, mode: room.mode, fanclub: fanclub, session: session,
                    settings: Settings(["tenant": .string(tenant), "os": .string(os)]), socketId: "s-1")
    }

    static func overlay(_ timelineId: String, type: Int = 1, trackingId: String? = nil, duration: Int = 0,
                        targets: [String]? = nil, url: String = "https://cdn.example/quiz.html", alignment: Int? = 4) throws -> IncomingOverlay {
        var members: JSONObject = [
            "timelineId": .string(timelineId), "typeTimeline": .number(Double(type)), "url": .string(url),
            "duration": .number(Double(duration)),
        ]
        if let alignment { members["position"] = ["alignment": .number(Double(alignment))] }
        if let trackingId { members["_trackingId"] = .string(trackingId) }
        if let targets { members["targets"] = .array(targets.map(JSONValue.string)) }
        return try #require(IncomingOverlay(payload: .object(members)))
    }

    /// A core with the context of room m1 (live) set.
    static func core(_ context: RoomContext = context()) -> ScreenCore {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(context, nowMs: nowMs, now: t0, into: &effects)
        core.answeredLoaded([], viewer: context.session.answeredBucket, mediaId: context.mediaId, nowMs: nowMs, now: t0, into: &effects)
        return core
    }

    static func shown(_ effects: [ScreenEffect]) -> [String] {
        effects.compactMap { if case .show(let record, _) = $0 { return record.overlayId } else { return nil } }
    }

    static func hidden(_ effects: [ScreenEffect]) -> [(String, HideReason)] {
        effects.compactMap { if case .hide(let record, let reason, _) = $0 { return (record.overlayId, reason) } else { return nil } }
    }

    static func tracked(_ effects: [ScreenEffect]) -> [TrackingEvent] {
        effects.compactMap { if case .track(let event) = $0 { return event } else { return nil } }
    }

    static func controls(_ effects: [ScreenEffect]) -> [Bool] {
        effects.compactMap { if case .controls(let visible) = $0 { return visible } else { return nil } }
    }

    static func timers(_ effects: [ScreenEffect]) -> [ContinuousClock.Instant] {
        effects.compactMap { if case .armTimer(let at) = $0 { return at } else { return nil } }
    }

    static func keptOff(_ effects: [ScreenEffect]) -> [String] {
        effects.compactMap { if case .keptOffScreen(_, _, let reason) = $0 { return reason } else { return nil } }
    }

    /// Offers an overlay in room m1 (live) now; returns its id and the effects.
    static func offer(_ core: inout ScreenCore, _ overlay: IncomingOverlay, room: RoomKey = live,
                      at now: ContinuousClock.Instant = t0) -> (String?, [ScreenEffect]) {
        var effects: [ScreenEffect] = []
        let overlayId = core.offer(overlay, receivedAt: nowMs, room: room, nowMs: nowMs, now: now, into: &effects)
        return (overlayId, effects)
    }

    static func bridge(_ core: inout ScreenCore, _ overlayId: String, _ type: String, data: JSONValue = .null,
                       connection: Int? = nil) throws -> (JSONValue, [ScreenEffect]) {
        var effects: [ScreenEffect] = []
        let message = try #require(BridgeMessage(["type": .string(type), "data": data]))
        let result = try core.bridge(overlayId, message: message, connection: connection, into: &effects)
        return (result, effects)
    }

    // MARK: Templates follow the viewer (issue 21, item 5)

    @Test func aLoginShowsEveryOverlayAgainWithItsNewURLAndTheSameTrackingSession() throws {
        var core = Self.core(Self.context(session: .anonymous))
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1", trackingId: "t1", duration: 30)).0)
        _ = try Self.bridge(&core, quiz, "INTERACTIVE_SHOW_ANALYTICS")
        #expect(core.overlay(quiz)?.url.contains("logged=false") == true)
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.hidden(effects).map(\.1) == [.sessionChanged])
        #expect(Self.hidden(effects).map(\.0) == [quiz])
        let again = try #require(Self.shown(effects).first)
        #expect(again != quiz)
        #expect(core.screen.map(\.overlayId) == [again])
        #expect(core.overlay(again)?.timelineId == "q1")
        #expect(core.overlay(again)?.url.contains("logged=true") == true)
        #expect(core.overlay(again)?.trackingId == "t1")
        // The tracking session goes on: nothing is sent for the hide or the show.
        #expect(Self.tracked(effects).isEmpty)
        // The revealed overlay gave the controls back; the new one is loaded hidden again.
        #expect(Self.controls(effects) == [true])
        #expect(core.overlay(again)?.revealed == false)
        // It keeps its expiry: a fire at show + 30 s + 5 s hides the new one.
        var fired: [ScreenEffect] = []
        core.timerFired(core.timerArmed(at: Self.t0 + .seconds(35)), now: Self.t0 + .seconds(35), into: &fired)
        #expect(Self.hidden(fired).map(\.1) == [.expired])
    }

    @Test func aLogoutAndAFanclubChangeShowTheOverlayAgain() throws {
        var core = Self.core(Self.context(fanclub: false))
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        #expect(core.overlay(quiz)?.url.contains("fanclub=false") == true)
        var joined: [ScreenEffect] = []
        core.setContext(Self.context(fanclub: true), nowMs: Self.nowMs, now: Self.t0, into: &joined)
        #expect(Self.hidden(joined).map(\.1) == [.sessionChanged])
        let member = try #require(core.screen.first)
        #expect(!member.url.contains("fanclub=false"))
        var loggedOut: [ScreenEffect] = []
        core.setContext(Self.context(session: .anonymous, fanclub: true), nowMs: Self.nowMs, now: Self.t0, into: &loggedOut)
        #expect(Self.hidden(loggedOut).map(\.0) == [member.overlayId])
        #expect(core.screen.first?.url.contains("logged=false") == true)
    }

    @Test func aContextChangeThatChangesNoURLShowsNothingAgain() throws {
        var core = Self.core()
        _ = Self.offer(&core, try Self.overlay("q1"))
        var effects: [ScreenEffect] = []
        var expired = Self.alice
        expired.expired = true  // the same viewer, the session marked expired
        var context = Self.context(session: expired)
        context.socketId = "s-2"
        core.setContext(context, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.hidden(effects).isEmpty)
        #expect(Self.shown(effects).isEmpty)
    }

    // MARK: Context

    @Test func aNewMediaOrViewerReloadsTheAnsweredTimelines() {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(effects == [.loadAnswered(viewer: "user:alice", mediaId: "m1")])
        effects = []
        var sameRoom = Self.context()
        sameRoom.fanclub = false
        core.setContext(sameRoom, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(effects.isEmpty)
        core.setContext(Self.context(session: .anonymous), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(effects == [.loadAnswered(viewer: "anonymous", mediaId: "m1")])
    }

    @Test func answeredTimelinesOfAnotherViewerOrMediaAreNotTaken() {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        core.answeredLoaded(["q1"], viewer: "user:bob", mediaId: "m1", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        core.answeredLoaded(["q2"], viewer: "user:alice", mediaId: "m2", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered.isEmpty)
        #expect(core.answeredPending != nil)
        core.answeredLoaded(["q3"], viewer: "user:alice", mediaId: "m1", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered == ["q3"])
        #expect(core.answeredPending == nil)
        core.addAnswered(["q4"], viewer: "user:alice", mediaId: "m1")
        core.markAnswered("q5", room: Self.live, viewer: "user:alice")
        // An answer given in another room or by another viewer is not this screen's.
        core.markAnswered("q6", room: RoomKey(mediaId: "m2", mode: .live), viewer: "user:alice")
        core.markAnswered("q7", room: Self.live, viewer: "user:bob")
        #expect(core.answered == ["q3", "q4", "q5"])
        // A late second reply of the same read changes nothing.
        core.answeredLoaded([], viewer: "user:alice", mediaId: "m1", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered == ["q3", "q4", "q5"])
    }

    @Test func aFailedReadLeavesNoneKnown() {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        core.answeredLoaded(nil, viewer: "user:alice", mediaId: "m1", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered.isEmpty)
        #expect(core.answeredPending == nil)
    }

    @Test func minigamesWaitForTheAnsweredTimelinesAndAreOfferedInOrderOnceRead() throws {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        let (first, held1) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        let (second, held2) = Self.offer(&core, try Self.overlay("q2", trackingId: "t2"))
        #expect(first == nil && second == nil)
        #expect(held1.isEmpty && held2.isEmpty)
        #expect(core.heldOfferCount == 2)
        effects = []
        core.answeredLoaded(["q1"], viewer: "user:alice", mediaId: "m1", nowMs: Self.nowMs + 7, now: Self.t0, into: &effects)
        // q1 was answered before: kept off screen; q2 is shown.
        #expect(Self.keptOff(effects) == ["already_interacted"])
        #expect(Self.shown(effects).count == 1)
        #expect(core.screen.map(\.timelineId) == ["q2"])
        #expect(Self.tracked(effects).first == .received(trackingId: "t1", timelineId: "q1", overlayType: "minigame",
                                                         emitTimestamp: nil, durationSec: 0, receivedAt: Self.nowMs))
        #expect(core.heldOfferCount == 0)
    }

    @Test func tooManyWaitingMinigamesStopTheWait() throws {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        for index in 0..<ScreenCore.maxHeldOffers { _ = Self.offer(&core, try Self.overlay("q\(index)")) }
        #expect(core.heldOfferCount == ScreenCore.maxHeldOffers)
        let (_, released) = Self.offer(&core, try Self.overlay("last"))
        #expect(core.heldOfferCount == 0)
        #expect(core.answeredPending == nil)
        // Each replaced the one before: every one was shown once.
        #expect(Self.shown(released).count == ScreenCore.maxHeldOffers + 1)
        #expect(core.screen.map(\.timelineId) == ["last"])
    }

    @Test func leavingWhileMinigamesWaitKeepsThemOffScreen() throws {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        _ = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        effects = []
        core.removeAll(into: &effects)
        core.setContext(nil, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.keptOff(effects) == ["remove_all_view"])
        #expect(core.heldOfferCount == 0)
    }

    /// Issue 21, item 3 (c): a late interactive status of another room or viewer is ignored.
    @Test func answeredTimelinesOfAnotherRoomOrViewerAreIgnored() throws {
        var core = Self.core()
        core.addAnswered(["q1"], viewer: "user:alice", mediaId: "m0")
        core.addAnswered(["q2"], viewer: "user:bob", mediaId: "m1")
        #expect(core.answered.isEmpty)
        #expect(Self.offer(&core, try Self.overlay("q1")).0 != nil)
    }

    /// The store's answered timelines add to what the interactive status brought first.
    @Test func theStoreReadKeepsWhatTheStatusAdded() {
        var core = ScreenCore(idPrefix: "abc")
        var effects: [ScreenEffect] = []
        core.setContext(Self.context(), nowMs: Self.nowMs, now: Self.t0, into: &effects)
        core.addAnswered(["from-status"], viewer: "user:alice", mediaId: "m1")
        core.answeredLoaded(["from-store"], viewer: "user:alice", mediaId: "m1", nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered == ["from-status", "from-store"])
    }

    @Test func noContextForgetsTheAnsweredTimelines() {
        var core = Self.core()
        core.addAnswered(["q1"], viewer: "user:alice", mediaId: "m1")
        var effects: [ScreenEffect] = []
        core.setContext(nil, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(core.answered.isEmpty)
        #expect(effects.isEmpty)
    }

    // MARK: Showing

    @Test func anOverlayIsShownWithItsTemplateURLAndTracked() throws {
        var core = Self.core()
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        #expect(overlayId == "ov-abc-1")
        #expect(Self.shown(effects) == ["ov-abc-1"])
        let record = try #require(core.overlay("ov-abc-1"))
        #expect(record.url == "https://cdn.example/quiz.html?logged=true&duration=0")
        #expect(record.shownAt == Self.nowMs)
        #expect(record.trackingId == "t1")
        #expect(Self.tracked(effects) == [
            .received(trackingId: "t1", timelineId: "q1", overlayType: "minigame", emitTimestamp: nil, durationSec: 0, receivedAt: Self.nowMs),
            .shown(trackingId: "t1"),
        ])
        #expect(effects.contains(.shown(record, replacing: [])))
        #expect(core.screen.count == 1)
    }

    @Test func overlayIdsCountUp() throws {
        var core = Self.core()
        #expect(Self.offer(&core, try Self.overlay("q1")).0 == "ov-abc-1")
        #expect(Self.offer(&core, try Self.overlay("q2")).0 == "ov-abc-2")
    }

    @Test func anAnonymousViewerGetsLoggedFalseAndAnOnlivev2NonMemberFanclubFalse() throws {
        var core = Self.core(Self.context(session: .anonymous, fanclub: false))
        let (overlayId, _) = Self.offer(&core, try Self.overlay("q1", duration: 30))
        let record = try #require(overlayId.flatMap(core.overlay))
        #expect(record.url == "https://cdn.example/quiz.html?logged=false&duration=30&fanclub=false")
    }

    @Test func vodOverlaysAreNotTracked() throws {
        var core = Self.core(Self.context(Self.vod))
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"), room: Self.vod)
        #expect(overlayId != nil)
        #expect(Self.tracked(effects).isEmpty)
        #expect(core.overlay(overlayId ?? "")?.trackingId == nil)
    }

    @Test func aNewMinigameReplacesTheOldOneAfterTellingThePlayers() throws {
        var core = Self.core()
        let (first, _) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        let (second, effects) = Self.offer(&core, try Self.overlay("q2", trackingId: "t2"))
        let firstId = try #require(first)
        let secondId = try #require(second)
        #expect(Self.hidden(effects).map(\.0) == [firstId])
        #expect(Self.hidden(effects).map(\.1) == [.replaced])
        // overlay.hide of the old, then overlay.show of the new, then the old one's log and tracking.
        let hideIndex = try #require(effects.firstIndex { if case .hide = $0 { return true } else { return false } })
        let showIndex = try #require(effects.firstIndex { if case .show = $0 { return true } else { return false } })
        let cancelIndex = try #require(effects.firstIndex(of: .track(.cancelled(trackingId: "t1", reason: "replaced_by_new_overlay"))))
        #expect(hideIndex < showIndex && showIndex < cancelIndex)
        // One log line for the decision: the new overlay's, naming the one it replaced.
        #expect(effects.contains { if case .shown(let record, let replacing) = $0 { record.overlayId == secondId && replacing == [firstId] } else { false } })
        #expect(!effects.contains { if case .hidden = $0 { true } else { false } })
        #expect(core.screen.map(\.overlayId) == [secondId])
    }

    @Test func aDialogDoesNotReplaceAMinigame() throws {
        var core = Self.core()
        let (quiz, _) = Self.offer(&core, try Self.overlay("q1"))
        var effects: [ScreenEffect] = []
        let dialog = core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.hidden(effects).isEmpty)
        #expect(core.screen.map(\.overlayId) == [quiz, dialog].compactMap { $0 })
        // A lucky dialog replaces the predict one.
        effects = []
        _ = core.showDialog(try Self.overlay("l1", type: 5), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.hidden(effects).map(\.0) == [dialog].compactMap { $0 })
    }

    @Test func aDialogAlreadyOnScreenIsReturnedNotShownAgain() throws {
        var core = Self.core()
        var effects: [ScreenEffect] = []
        let first = core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        effects = []
        let again = core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(again == first)
        #expect(effects.isEmpty)
    }

    @Test func nothingIsShownWithoutTheRoomsContext() throws {
        var core = ScreenCore(idPrefix: "abc")
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        #expect(overlayId == nil)
        #expect(Self.keptOff(effects) == ["remove_all_view"])
        #expect(Self.tracked(effects).last == .keptOffScreen(trackingId: "t1", reason: "remove_all_view"))
    }

    // MARK: Kept off screen

    @Test func anOverlayOfAnotherRoomIsKeptOffScreen() throws {
        var core = Self.core()
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"), room: RoomKey(mediaId: "m0", mode: .live))
        #expect(overlayId == nil)
        #expect(Self.keptOff(effects) == ["remove_all_view"])
    }

    @Test func targetsFilterByOperatingSystem() throws {
        var core = Self.core()
        #expect(Self.offer(&core, try Self.overlay("q1", targets: ["ios", "android"])).0 == nil)
        #expect(Self.offer(&core, try Self.overlay("q2", targets: ["linuxstb"])).0 != nil)
        #expect(Self.offer(&core, try Self.overlay("q3", targets: ["all"])).0 != nil)
        let (refused, effects) = Self.offer(&core, try Self.overlay("q4", trackingId: "t4", targets: []))
        #expect(refused == nil)
        #expect(Self.keptOff(effects) == ["not_targeted"])
        #expect(Self.tracked(effects).last == .keptOffScreen(trackingId: "t4", reason: "not_targeted"))
    }

    @Test func anAnsweredTimelineIsNotShownAgain() throws {
        var core = Self.core()
        core.addAnswered(["q1"], viewer: "user:alice", mediaId: "m1")
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1"))
        #expect(overlayId == nil)
        #expect(Self.keptOff(effects) == ["already_interacted"])
    }

    @Test func anInvalidOverlayIsKeptOffScreen() throws {
        var core = Self.core()
        #expect(Self.keptOff(Self.offer(&core, try Self.overlay("q1", alignment: nil)).1) == ["invalid_overlay_state"])
        #expect(Self.keptOff(Self.offer(&core, try Self.overlay("q2", url: "javascript:alert(1)")).1) == ["invalid_overlay_state"])
    }

    /// Issue 21, item 8: only minigames need an alignment (seed 000). A predict or lucky overlay
    /// without `position` is admitted, and its dialog opens at the centre, 100 % × 100 %.
    @Test(arguments: [3, 5])
    func aPredictOrLuckyOverlayWithoutPositionOpensCentredOverTheWholeArea(type: Int) throws {
        var core = Self.core()
        let overlay = try Self.overlay("p1", type: type, alignment: nil)
        var effects: [ScreenEffect] = []
        #expect(core.admit(overlay, receivedAt: Self.nowMs, room: Self.live, onScreen: nil, into: &effects))
        #expect(Self.keptOff(effects).isEmpty)
        let dialog = try #require(core.showDialog(overlay, room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects))
        #expect(core.overlay(dialog)?.placement == OverlayPlacement(location: 4, widthPct: 100, heightPct: 100))
    }

    @Test func aTimelineOnScreenIsNotShownTwiceAndItsOwnSessionIsNotCancelled() throws {
        var core = Self.core()
        _ = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        let (repeated, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1"))
        #expect(repeated == nil)
        #expect(Self.keptOff(effects) == ["already_on_screen"])
        #expect(!Self.tracked(effects).contains(.keptOffScreen(trackingId: "t1", reason: "already_on_screen")))
        // Another emit of the same timeline (a new tracking id) is cancelled.
        let (_, other) = Self.offer(&core, try Self.overlay("q1", trackingId: "t2"))
        #expect(Self.tracked(other).last == .keptOffScreen(trackingId: "t2", reason: "already_on_screen"))
    }

    @Test func admittingWithoutTheOnScreenCheckLetsAPredictTimelineThrough() throws {
        var core = Self.core()
        var effects: [ScreenEffect] = []
        #expect(core.admit(try Self.overlay("p1", type: 3, trackingId: "t1"), receivedAt: Self.nowMs, room: Self.live,
                           onScreen: nil, into: &effects))
        #expect(Self.tracked(effects).count == 1)
        #expect(core.screen.isEmpty)
    }

    @Test func cancellingTrackingOfAnUnshownOverlayIsLiveOnly() throws {
        let core = Self.core()
        var effects: [ScreenEffect] = []
        core.cancelTracking(try Self.overlay("p1", trackingId: "t1"), room: Self.live, reason: .recalled, into: &effects)
        #expect(effects == [.track(.cancelled(trackingId: "t1", reason: "recalled"))])
        effects = []
        core.cancelTracking(try Self.overlay("p1", trackingId: "t1"), room: Self.vod, reason: .recalled, into: &effects)
        #expect(effects.isEmpty)
    }

    // MARK: Expiry

    @Test func anOverlayExpiresFiveSecondsAfterItsDuration() throws {
        var core = Self.core()
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", trackingId: "t1", duration: 10))
        #expect(Self.timers(effects) == [Self.t0 + .seconds(15)])
        let timer = core.timerArmed(at: Self.t0 + .seconds(15))
        var early: [ScreenEffect] = []
        core.timerFired(timer, now: Self.t0 + .seconds(14), into: &early)
        #expect(Self.hidden(early).isEmpty)
        // Fired early, it asks for the timer again.
        #expect(Self.timers(early) == [Self.t0 + .seconds(15)])
        let again = core.timerArmed(at: Self.t0 + .seconds(15))
        var due: [ScreenEffect] = []
        core.timerFired(again, now: Self.t0 + .seconds(15), into: &due)
        #expect(Self.hidden(due).map(\.0) == [overlayId].compactMap { $0 })
        #expect(Self.hidden(due).map(\.1) == [.expired])
        #expect(due.contains(.track(.cancelled(trackingId: "t1", reason: "expired"))))
        #expect(core.screen.isEmpty)
    }

    @Test func anOverlayWithoutDurationNeverExpires() throws {
        var core = Self.core()
        let (_, effects) = Self.offer(&core, try Self.overlay("q1"))
        #expect(Self.timers(effects).isEmpty)
    }

    @Test func aLaterExpiryNeedsNoNewTimerAndAReplacedTimerDoesNothing() throws {
        var core = Self.core()
        let (_, first) = Self.offer(&core, try Self.overlay("p1", type: 3, duration: 10))
        let firstTimer = core.timerArmed(at: try #require(Self.timers(first).first))
        let (_, later) = Self.offer(&core, try Self.overlay("q1", duration: 60))
        #expect(Self.timers(later).isEmpty)
        var effects: [ScreenEffect] = []
        _ = core.showDialog(try Self.overlay("l1", type: 5, duration: 1), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        #expect(Self.timers(effects) == [Self.t0 + .seconds(6)])
        let secondTimer = core.timerArmed(at: Self.t0 + .seconds(6))
        var stale: [ScreenEffect] = []
        core.timerFired(firstTimer, now: Self.t0 + .seconds(15), into: &stale)
        #expect(stale.isEmpty)
        var fired: [ScreenEffect] = []
        core.timerFired(secondTimer, now: Self.t0 + .seconds(6), into: &fired)
        #expect(Self.hidden(fired).count == 1)
        #expect(Self.timers(fired) == [Self.t0 + .seconds(65)])
    }

    @Test func aHiddenOverlayDoesNotExpireLater() throws {
        var core = Self.core()
        let (overlayId, effects) = Self.offer(&core, try Self.overlay("q1", duration: 10))
        let timer = core.timerArmed(at: try #require(Self.timers(effects).first))
        var hide: [ScreenEffect] = []
        core.hide(try #require(overlayId), reason: .dismissed, into: &hide)
        var fired: [ScreenEffect] = []
        core.timerFired(timer, now: Self.t0 + .seconds(15), into: &fired)
        #expect(fired.isEmpty)
    }

    // MARK: Hiding

    @Test func hidingEndsABetConfirmationAndTracking() throws {
        var core = Self.core()
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1", trackingId: "t1")).0)
        var effects: [ScreenEffect] = []
        core.hide(overlayId, reason: .interactiveHide, into: &effects)
        #expect(effects.first == .overlayGone(overlayId: overlayId))
        #expect(Self.hidden(effects).map(\.1) == [.interactiveHide])
        #expect(Self.tracked(effects) == [.cancelled(trackingId: "t1", reason: "interactive_hide")])
        // Hiding it again does nothing.
        effects = []
        core.hide(overlayId, reason: .interactiveHide, into: &effects)
        #expect(effects.isEmpty)
    }

    @Test func aRecallHidesEveryOverlayOfTheTimeline() throws {
        var core = Self.core()
        _ = Self.offer(&core, try Self.overlay("q1"))
        var dialogEffects: [ScreenEffect] = []
        _ = core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &dialogEffects)
        var effects: [ScreenEffect] = []
        core.recall(timelineId: "p1", into: &effects)
        #expect(Self.hidden(effects).map(\.1) == [.recalled])
        #expect(core.screen.map(\.timelineId) == ["q1"])
        effects = []
        core.recall(timelineId: "unknown", into: &effects)
        #expect(effects.isEmpty)
    }

    @Test func removeAllHidesEverythingAndEndsTheContext() throws {
        var core = Self.core()
        core.addAnswered(["x"], viewer: "user:alice", mediaId: "m1")
        _ = Self.offer(&core, try Self.overlay("q1"))
        var effects: [ScreenEffect] = []
        _ = core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0, into: &effects)
        effects = []
        core.removeAll(into: &effects)
        #expect(Self.hidden(effects).map(\.1) == [.removeAll, .removeAll])
        #expect(core.context == nil)
        #expect(core.answered.isEmpty)
        // An overlay of the room still on its way is not shown.
        #expect(Self.offer(&core, try Self.overlay("q2")).0 == nil)
    }

    @Test func aPlayerThatGoesHidesTheOverlaysItOwns() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        var effects: [ScreenEffect] = []
        let dialog = try #require(core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0,
                                                  into: &effects))
        try core.attached(quiz, connection: 7, nowMs: Self.nowMs, into: &effects)
        try core.attached(dialog, connection: 8, nowMs: Self.nowMs, into: &effects)
        effects = []
        core.clientDisconnected(7, into: &effects)
        #expect(Self.hidden(effects).map(\.0) == [quiz])
        #expect(Self.hidden(effects).map(\.1) == [.playerDisconnected])
        effects = []
        core.clientDisconnected(99, into: &effects)
        #expect(effects.isEmpty)
    }

    // MARK: Posts

    @Test func aPostGoesIntoEveryOverlayOfTheTimeline() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        var effects: [ScreenEffect] = []
        core.post(timelineId: "q1", key: "UPDATE_DATA_INTERACTIVE", data: ["n": 1], into: &effects)
        #expect(effects == [.post(overlayId: quiz, key: "UPDATE_DATA_INTERACTIVE", data: ["n": 1])])
        effects = []
        core.post(timelineId: "other", key: "K", data: 1, into: &effects)
        #expect(effects.isEmpty)
    }

    @Test func aPostLargerThanTheLimitIsNotForwarded() throws {
        var core = Self.core()
        _ = Self.offer(&core, try Self.overlay("q1"))
        let large = JSONValue.string(String(repeating: "x", count: OnScreenOverlay.rawLimit))
        var effects: [ScreenEffect] = []
        core.post(timelineId: "q1", key: "K", data: large, into: &effects)
        #expect(effects == [.postTooLarge(timelineId: "q1", key: "K", bytes: OnScreenOverlay.rawLimit + 2)])
    }

    // MARK: Player reports

    @Test func reportsOnAnUnknownOverlayAreRefused() {
        var core = Self.core()
        var effects: [ScreenEffect] = []
        #expect(throws: RPCError.self) { try core.attached("ov-x", connection: 1, nowMs: Self.nowMs, into: &effects) }
        #expect(throws: RPCError.self) { try core.dismiss("ov-x", into: &effects) }
        #expect(throws: RPCError.self) {
            _ = try core.rendered("ov-x", loaded: true, reason: nil, connection: 1, nowMs: Self.nowMs, into: &effects)
        }
        #expect(effects.isEmpty)
    }

    @Test func attachedIsTrackedAndMakesTheConnectionTheOwner() throws {
        var core = Self.core()
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1", trackingId: "t1")).0)
        var effects: [ScreenEffect] = []
        try core.attached(overlayId, connection: 3, nowMs: Self.nowMs + 40, into: &effects)
        #expect(effects == [.track(.attached(trackingId: "t1", at: Self.nowMs + 40))])
        #expect(core.overlay(overlayId)?.owner == 3)
        // Attaching without a claim (interactivectl) keeps the owner.
        try core.attached(overlayId, connection: nil, nowMs: Self.nowMs, into: &effects)
        #expect(core.overlay(overlayId)?.owner == 3)
        // A later attach takes it over.
        try core.attached(overlayId, connection: 4, nowMs: Self.nowMs, into: &effects)
        #expect(core.overlay(overlayId)?.owner == 4)
    }

    @Test func theFirstRenderReportWinsAndClaimsAnUnownedOverlay() throws {
        var core = Self.core()
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1", trackingId: "t1")).0)
        var effects: [ScreenEffect] = []
        #expect(try core.rendered(overlayId, loaded: true, reason: nil, connection: 5, nowMs: Self.nowMs + 90, into: &effects))
        #expect(effects == [.track(.loaded(trackingId: "t1", at: Self.nowMs + 90))])
        #expect(core.overlay(overlayId)?.owner == 5)
        effects = []
        #expect(try !core.rendered(overlayId, loaded: false, reason: "late", connection: 6, nowMs: Self.nowMs, into: &effects))
        #expect(effects.isEmpty)
        #expect(core.overlay(overlayId)?.owner == 5)
    }

    @Test func aFailedLoadIsLoggedAndTracked() throws {
        var core = Self.core()
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1", trackingId: "t1")).0)
        var effects: [ScreenEffect] = []
        _ = try core.rendered(overlayId, loaded: false, reason: "404", connection: nil, nowMs: Self.nowMs, into: &effects)
        let record = try #require(core.overlay(overlayId))
        #expect(effects == [.loadFailed(record, reason: "404"), .track(.failed(trackingId: "t1", reason: "404", at: Self.nowMs))])
    }

    @Test func anUntrackedRenderReportChangesOnlyTheFlag() throws {
        var core = Self.core(Self.context(Self.vod))
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1"), room: Self.vod).0)
        var effects: [ScreenEffect] = []
        #expect(try core.rendered(overlayId, loaded: false, reason: nil, connection: nil, nowMs: Self.nowMs, into: &effects))
        #expect(effects.isEmpty)
        #expect(core.overlay(overlayId)?.renderReported == true)
    }

    @Test func dismissHidesAsDismissed() throws {
        var core = Self.core()
        let overlayId = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        var effects: [ScreenEffect] = []
        try core.dismiss(overlayId, into: &effects)
        #expect(Self.hidden(effects).map(\.1) == [.dismissed])
    }

    // MARK: Bridge and controls

    @Test func revealingHidesTheControlsOnceAndTheLastRevealedOverlayBringsThemBack() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        var effects: [ScreenEffect] = []
        let dialog = try #require(core.showDialog(try Self.overlay("p1", type: 3), room: Self.live, nowMs: Self.nowMs, now: Self.t0,
                                                  into: &effects))
        let (handled, reveal) = try Self.bridge(&core, quiz, "INTERACTIVE_SHOW_ANALYTICS")
        #expect(handled == ["handled": true])
        #expect(Self.controls(reveal) == [false])
        #expect(core.controlsHidden)
        // Revealing again changes nothing.
        #expect(try Self.bridge(&core, quiz, "INTERACTIVE_SHOW_ANALYTICS").1.isEmpty)
        // A second revealed overlay: the controls are already hidden.
        let (_, second) = try Self.bridge(&core, dialog, "INTERACTIVE_OPEN_ANALYTICS")
        #expect(second.contains { if case .reveal = $0 { return true } else { return false } })
        #expect(Self.controls(second).isEmpty)
        // The first leaves: the other still hides them.
        effects = []
        core.hide(quiz, reason: .dismissed, into: &effects)
        #expect(Self.controls(effects).isEmpty)
        // The last leaves: they come back.
        let (_, closed) = try Self.bridge(&core, dialog, "INTERACTIVE_CLOSE_ANALYTICS")
        #expect(Self.hidden(closed).map(\.1) == [.interactiveHide])
        #expect(Self.controls(closed) == [true])
        #expect(!core.controlsHidden)
    }

    @Test func aRevealedOverlayReplacedByANewOneBringsTheControlsBackBeforeTheShow() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        _ = try Self.bridge(&core, quiz, "INTERACTIVE_SHOW_ANALYTICS")
        let (_, effects) = Self.offer(&core, try Self.overlay("q2"))
        let controlsIndex = try #require(effects.firstIndex(of: .controls(visible: true)))
        let showIndex = try #require(effects.firstIndex { if case .show = $0 { return true } else { return false } })
        #expect(controlsIndex < showIndex)
    }

    @Test func anAdClickOpensALinkAndAnAnswerStartsTheFlow() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        let (link, linkEffects) = try Self.bridge(&core, quiz, "INTERACTIVE_ACTION_REPORT",
                                                  data: ["action": "CLICK_ADS", "url": "https://ads.example/x"])
        #expect(link == ["handled": true, "action": "link"])
        #expect(linkEffects == [.link(overlayId: quiz, url: "https://ads.example/x", loadable: true)])
        let (answer, answerEffects) = try Self.bridge(&core, quiz, "INTERACTIVE_ACTION_REPORT", data: ["choice": 2])
        #expect(answer == ["handled": true, "action": "answer"])
        #expect(answerEffects == [.startAnswer(overlayId: quiz, answer: ["choice": 2])])
    }

    struct AdClickCase: Sendable, CustomTestStringConvertible {
        let url: String
        /// nil: dropped (no link a player could use).
        let loadable: Bool?
        var testDescription: String { "\(url.prefix(40)) → \(loadable.map { "link, loadable \($0)" } ?? "dropped")" }
    }

    /// Issue 21, item 2: an ad click is never an answer, whatever its url (a click to an url a
    /// web view cannot open started the answer flow: a request, the timeline answered, a bet).
    @Test(arguments: [
        AdClickCase(url: "intent://scan/#Intent;scheme=zxing;end", loadable: false),
        AdClickCase(url: "market://details?id=tv.example", loadable: false),
        AdClickCase(url: "file:///etc/passwd", loadable: nil),
        AdClickCase(url: "https://ads.example/" + String(repeating: "x", count: 5000), loadable: nil),
        AdClickCase(url: "https://ads.example/a b", loadable: nil),
    ])
    func anAdClickToAnUnloadableURLIsNeverAnAnswer(_ ad: AdClickCase) throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        let (result, effects) = try Self.bridge(&core, quiz, "INTERACTIVE_ACTION_REPORT", data: ["action": "CLICK_ADS", "url": .string(ad.url)])
        if let loadable = ad.loadable {
            #expect(result == ["handled": true, "action": "link"])
            #expect(effects == [.link(overlayId: quiz, url: ad.url, loadable: loadable)])
        } else {
            #expect(result == ["handled": true, "action": "ignored"])
            #expect(effects.count == 1)
            #expect(effects.allSatisfy { if case .adClickDropped(quiz, _) = $0 { return true } else { return false } })
        }
    }

    @Test func anAdClickWithoutAURLIsDropped() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        let (result, effects) = try Self.bridge(&core, quiz, "INTERACTIVE_ACTION_REPORT", data: ["action": "CLICK_ADS"])
        #expect(result == ["handled": true, "action": "ignored"])
        #expect(effects == [.adClickDropped(overlayId: quiz, reason: "no url")])
    }

    @Test func pingsAreHandledAndUnknownTypesAreNot() throws {
        var core = Self.core()
        let quiz = try #require(Self.offer(&core, try Self.overlay("q1")).0)
        let (ping, pingEffects) = try Self.bridge(&core, quiz, "INTERACTIVE_PING_ANALYTICS")
        #expect(ping == ["handled": true])
        #expect(pingEffects.isEmpty)
        let (unknown, unknownEffects) = try Self.bridge(&core, quiz, "SOMETHING_ELSE", connection: 9)
        #expect(unknown == ["handled": false])
        #expect(unknownEffects == [.unknownBridgeMessage(overlayId: quiz, type: "SOMETHING_ELSE")])
        // Any report claims an unowned overlay.
        #expect(core.overlay(quiz)?.owner == 9)
    }
}
