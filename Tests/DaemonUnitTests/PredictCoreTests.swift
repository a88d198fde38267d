import JSONValue
import Testing
@testable import InteractiveDaemon

/// The predict decision core against a test clock: the buttons (seed 000), the dialogs' timelines,
/// the results and their store writes, one at a time.
@Suite struct PredictCoreTests {
    static let t0 = ContinuousClock.now
    static let room = RoomKey(mediaId: "m1", mode: .live)
    static let otherRoom = RoomKey(mediaId: "m2", mode: .live)

    static func overlay(_ timelineId: String, type: Int = 3, trackingId: String? = "t-1", imageIdle: String? = nil,
                        imagePower: String? = nil) throws -> IncomingOverlay {
        var members: JSONObject = [
            "timelineId": .string(timelineId), "typeTimeline": .number(Double(type)),
            "url": "https://cdn.example/predict.html", "position": ["alignment": 4],
        ]
        if let trackingId { members["_trackingId"] = .string(trackingId) }
        if let imageIdle { members["imageIdle"] = .string(imageIdle) }
        if let imagePower { members["imagePower"] = .string(imagePower) }
        return try #require(IncomingOverlay(payload: .object(members)))
    }

    static func buttonData(_ members: JSONObject) throws -> PredictInput.ButtonData {
        try #require(PredictInput.ButtonData(.object(members)))
    }

    static func published(_ effects: [PredictEffect]) -> [PredictButton] {
        effects.compactMap { if case .publish(let button) = $0 { return button } else { return nil } }
    }

    static func statuses(_ effects: [PredictEffect]) -> [[PredictButton]] {
        effects.compactMap { if case .status(let buttons) = $0 { return buttons } else { return nil } }
    }

    static func timers(_ effects: [PredictEffect]) -> [ContinuousClock.Instant?] {
        effects.compactMap { if case .armTimer(let at) = $0 { return .some(at) } else { return nil } }
    }

    static func saves(_ effects: [PredictEffect]) -> [String] {
        effects.compactMap { if case .saveResult(let timelineId, _) = $0 { return timelineId } else { return nil } }
    }

    static func cancels(_ effects: [PredictEffect]) -> [(String?, HideReason)] {
        effects.compactMap {
            if case .cancelTracking(let overlay, _, let reason) = $0 { return (overlay.trackingId, reason) } else { return nil }
        }
    }

    // MARK: Bounds

    @Test func pastMaxTimelinesTheLeastRecentlyHeardOfGoes() throws {
        var core = PredictCore()
        for index in 0..<PredictCore.maxTimelines {
            _ = core.handle(.offer(try Self.overlay("p\(index)", trackingId: "t\(index)"), room: Self.room), now: Self.t0)
        }
        // p0 is heard of again: p1 is now the least recent.
        _ = core.handle(.buttonData(try Self.buttonData(["timelineId": "p0"])), now: Self.t0)
        let effects = core.handle(.offer(try Self.overlay("new", trackingId: "t-new"), room: Self.room), now: Self.t0)
        #expect(Self.cancels(effects).map(\.0) == ["t1"])
        #expect(Self.cancels(effects).map(\.1) == [.replaced])
        #expect(effects.contains(.recallDialogs(timelineId: "p1")))
        #expect(Self.published(effects).first { $0.timelineId == "p1" }?.visible == false)
        #expect(core.buttons.count == PredictCore.maxTimelines)
        #expect(core.buttons["p1"] == nil && core.timelines["p1"] == nil)
        #expect(core.buttons["p0"] != nil && core.buttons["new"] != nil)
        #expect(core.dialog("p1") == nil)
    }

    @Test func aButtonTimelineIdOver256BytesIsRefused() {
        #expect(PredictInput.ButtonData(["timelineId": .string(String(repeating: "x", count: 257))]) == nil)
        #expect(PredictInput.ButtonData(["timelineId": .string(String(repeating: "x", count: 256))]) != nil)
    }

    // MARK: Buttons from overlays

    @Test func anOfferShowsAPowerButtonAtFullOpacityAndArmsTheFade() throws {
        var core = PredictCore()
        let effects = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let button = Self.published(effects)
        #expect(button.count == 1)
        #expect(button.first?.timelineId == "p1")
        #expect(button.first?.kind == .predict)
        #expect(button.first?.visible == true)
        #expect(button.first?.image == .power)
        #expect(button.first?.opacity == 1)
        #expect(Self.statuses(effects).last?.map(\.timelineId) == ["p1"])
        #expect(Self.timers(effects) == [Self.t0 + .seconds(5)])
        #expect(core.room == Self.room)
    }

    @Test func theButtonFadesToHalfAfterFiveSecondsAndNotBefore() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let early = core.handle(.timerFired, now: Self.t0 + .seconds(4))
        #expect(Self.published(early).isEmpty)
        #expect(Self.timers(early) == [Self.t0 + .seconds(5)])
        let due = core.handle(.timerFired, now: Self.t0 + .seconds(5))
        #expect(Self.published(due).map(\.opacity) == [0.5])
        // The timer that fired was the last one: nothing to disarm.
        #expect(Self.timers(due).isEmpty)
        #expect(core.buttons["p1"]?.opacity == 0.5)
        // Once faded, nothing more happens.
        let effects1 = core.handle(.timerFired, now: Self.t0 + .seconds(20))
        #expect(effects1.isEmpty)
    }

    @Test func aChangeBringsTheButtonBackToFullOpacityAndPostponesTheFade() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        _ = core.handle(.timerFired, now: Self.t0 + .seconds(5))
        let changed = core.handle(.buttonData(try Self.buttonData(["timelineId": "p1", "typeTimeline": 3])), now: Self.t0 + .seconds(8))
        #expect(Self.published(changed).map(\.opacity) == [1])
        #expect(Self.timers(changed) == [Self.t0 + .seconds(13)])
        let effects1 = core.handle(.timerFired, now: Self.t0 + .seconds(12))
        #expect(Self.published(effects1).isEmpty)
        let effects2 = core.handle(.timerFired, now: Self.t0 + .seconds(13))
        #expect(Self.published(effects2).map(\.opacity) == [0.5])
    }

    @Test func twoButtonsFadeEachOnItsOwnTimeWithOneTimer() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "a"), room: Self.room), now: Self.t0)
        let second = core.handle(.offer(try Self.overlay("p2", trackingId: "b"), room: Self.room), now: Self.t0 + .seconds(2))
        // The timer stays armed for the earlier fade.
        #expect(Self.timers(second).isEmpty)
        let first = core.handle(.timerFired, now: Self.t0 + .seconds(5))
        #expect(Self.published(first).map(\.timelineId) == ["p1"])
        #expect(Self.timers(first) == [Self.t0 + .seconds(7)])
        let last = core.handle(.timerFired, now: Self.t0 + .seconds(7))
        #expect(Self.published(last).map(\.timelineId) == ["p2"])
        #expect(Self.timers(last).isEmpty)
    }

    @Test func aLateTimerFadesEverythingDueInDeadlineOrder() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p2", trackingId: "b"), room: Self.room), now: Self.t0)
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "a"), room: Self.room), now: Self.t0 + .seconds(1))
        let effects = core.handle(.timerFired, now: Self.t0 + .seconds(30))
        #expect(Self.published(effects).map(\.timelineId) == ["p2", "p1"])
    }

    @Test func aLuckyOverlayMakesALuckyButton() throws {
        var core = PredictCore()
        let effects = core.handle(.offer(try Self.overlay("l1", type: 5), room: Self.room), now: Self.t0)
        #expect(Self.published(effects).first?.kind == .lucky)
    }

    @Test func overlayImagesAreTakenWhenLoadableAndKeptOtherwise() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", imageIdle: "https://cdn/idle.gif", imagePower: "https://cdn/power.gif"),
                               room: Self.room), now: Self.t0)
        let effects = core.handle(.offer(try Self.overlay("p1", imageIdle: "javascript:alert(1)", imagePower: "file:///etc/passwd"),
                                         room: Self.room), now: Self.t0 + .seconds(1))
        let button = Self.published(effects).first
        #expect(button?.imageIdle == "https://cdn/idle.gif")
        #expect(button?.imagePower == "https://cdn/power.gif")
    }

    @Test func aNewEmitOfATimelineCancelsThePreviousTrackingSession() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "old"), room: Self.room), now: Self.t0)
        let effects = core.handle(.offer(try Self.overlay("p1", trackingId: "new"), room: Self.room), now: Self.t0)
        let cancelled = Self.cancels(effects)
        #expect(cancelled.count == 1)
        #expect(cancelled.first?.0 == "old")
        #expect(cancelled.first?.1 == .replaced)
        #expect(core.dialog("p1")?.overlay.trackingId == "new")
    }

    @Test func theSameEmitAgainDoesNotCancelItsOwnSession() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "same"), room: Self.room), now: Self.t0)
        let effects = core.handle(.offer(try Self.overlay("p1", trackingId: "same"), room: Self.room), now: Self.t0)
        #expect(Self.cancels(effects).isEmpty)
        #expect(Self.published(effects).count == 1)
    }

    @Test func theFirstTimelineOfAnotherRoomForgetsThePreviousRoomsTimelines() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        _ = core.handle(.result(timelineId: "p1", counts: ["answer1": 1]), now: Self.t0)
        _ = core.handle(.offer(try Self.overlay("p2"), room: Self.otherRoom), now: Self.t0)
        #expect(core.dialog("p1") == nil)
        #expect(core.dialog("p2")?.room == Self.otherRoom)
        #expect(core.results.isEmpty)
    }

    // MARK: Tenants without buttons

    /// Issue 21, item 1: no button anywhere, the status included (it listed a visible `power`
    /// button, which players drew after any resubscribe).
    @Test(arguments: ["vtvlive", "onlivetv", "VTVprime"])
    func tenantsWithoutButtonsHaveNoneAnywhere(tenant: String) throws {
        var core = PredictCore(tenant: tenant)
        #expect(!core.showsButtons)
        let effects = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        #expect(Self.published(effects).isEmpty)
        #expect(Self.timers(effects).isEmpty)
        #expect(Self.statuses(effects).allSatisfy { $0.isEmpty })
        let data = core.handle(.buttonData(try Self.buttonData(["timelineId": "p2", "visible": true])), now: Self.t0)
        #expect(Self.published(data).isEmpty)
        #expect(Self.statuses(data).allSatisfy { $0.isEmpty })
        // The dialog can still be opened (its results cache stays).
        #expect(core.dialog("p1") != nil)
    }

    @Test func theTenantIsTakenWhenItChanges() throws {
        var core = PredictCore(tenant: "vtvlive")
        let effects1 = core.handle(.tenant("onlivev2"), now: Self.t0)
        #expect(effects1 == [.status([])])
        #expect(core.showsButtons)
        let effects2 = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        #expect(Self.published(effects2).count == 1)
        _ = core.handle(.tenant(nil), now: Self.t0)
        #expect(core.showsButtons)
    }

    /// A tenant change tells the players which buttons appear or go, and the status follows.
    @Test func aTenantChangeShowsOrHidesTheButtons() throws {
        var core = PredictCore(tenant: "onlivev2")
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let hidden = core.handle(.tenant("vtvlive"), now: Self.t0)
        #expect(Self.published(hidden).map(\.visible) == [false])
        #expect(Self.statuses(hidden) == [[]])
        #expect(Self.timers(hidden) == [nil])
        let shown = core.handle(.tenant("onlivev2"), now: Self.t0 + .seconds(1))
        #expect(Self.published(shown).map { [$0.timelineId: $0.visible] } == [["p1": true]])
        #expect(Self.statuses(shown).last?.map(\.timelineId) == ["p1"])
        #expect(Self.timers(shown) == [Self.t0 + .seconds(1) + PredictCore.fadeDelay])
    }

    // MARK: action-button-predict

    @Test func buttonDataWithoutATimelineIsRefused() throws {
        #expect(PredictInput.ButtonData(["typeTimeline": 3]) == nil)
        #expect(PredictInput.ButtonData(["timelineId": 7])?.timelineId == "7")
    }

    @Test func buttonDataForAnUnknownTimelineMakesAnIdlePredictButton() throws {
        var core = PredictCore()
        let effects = core.handle(.buttonData(try Self.buttonData([
            "timelineId": "p2", "imageIdle": "https://cdn/idle.gif", "imagePower": "https://cdn/power.gif",
        ])), now: Self.t0)
        let button = Self.published(effects).first
        #expect(button?.kind == .predict)
        #expect(button?.image == .idle)
        #expect(button?.visible == true)
        #expect(button?.imageIdle == "https://cdn/idle.gif")
        #expect(core.dialog("p2") == nil)
    }

    @Test func buttonDataForAnOfferedTimelineKeepsThePowerImage() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let effects = core.handle(.buttonData(try Self.buttonData(["timelineId": "p1", "typeTimeline": 5])), now: Self.t0)
        #expect(Self.published(effects).first?.image == .power)
        #expect(Self.published(effects).first?.kind == .lucky)
    }

    @Test func buttonDataHidesAndShowsAndKeepsImagesItDoesNotName() throws {
        var core = PredictCore()
        _ = core.handle(.buttonData(try Self.buttonData(["timelineId": "p2", "imageIdle": "https://cdn/idle.gif"])), now: Self.t0)
        let hidden = core.handle(.buttonData(try Self.buttonData(["timelineId": "p2", "visible": false])), now: Self.t0 + .seconds(1))
        #expect(Self.published(hidden).first?.visible == false)
        #expect(Self.published(hidden).first?.imageIdle == "https://cdn/idle.gif")
        // A hidden button does not fade.
        #expect(Self.timers(hidden) == [nil])
        let shown = core.handle(.buttonData(try Self.buttonData(["timelineId": "p2", "visible": "true"])), now: Self.t0 + .seconds(2))
        #expect(Self.published(shown).first?.visible == true)
        #expect(Self.timers(shown) == [Self.t0 + .seconds(7)])
    }

    @Test func aMinigameTypeInButtonDataKeepsTheButtonsKind() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("l1", type: 5), room: Self.room), now: Self.t0)
        let effects = core.handle(.buttonData(try Self.buttonData(["timelineId": "l1", "typeTimeline": 1])), now: Self.t0)
        #expect(Self.published(effects).first?.kind == .lucky)
    }

    @Test func theStatusListsButtonsSortedByTimeline() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p2", trackingId: "b"), room: Self.room), now: Self.t0)
        let effects = core.handle(.offer(try Self.overlay("p1", trackingId: "a"), room: Self.room), now: Self.t0)
        #expect(Self.statuses(effects).last?.map(\.timelineId) == ["p1", "p2"])
    }

    // MARK: Opening

    @Test func openingTurnsTheButtonIdleOnce() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let opened = core.handle(.opened(timelineId: "p1"), now: Self.t0 + .seconds(6))
        #expect(Self.published(opened).map(\.image) == [.idle])
        #expect(Self.published(opened).map(\.opacity) == [1])
        let effects1 = core.handle(.opened(timelineId: "p1"), now: Self.t0 + .seconds(7))
        #expect(effects1.isEmpty)
        let effects2 = core.handle(.opened(timelineId: "unknown"), now: Self.t0)
        #expect(effects2.isEmpty)
    }

    @Test func noDialogWithoutARoom() throws {
        let core = PredictCore()
        #expect(core.dialog("p1") == nil)
    }

    // MARK: Recall and leaving

    @Test func aRecallHidesTheButtonCancelsTrackingAndTheDialogs() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "t9"), room: Self.room), now: Self.t0)
        let effects = core.handle(.recall(timelineId: "p1"), now: Self.t0 + .seconds(1))
        #expect(Self.cancels(effects).map(\.0) == ["t9"])
        #expect(Self.cancels(effects).map(\.1) == [.recalled])
        #expect(effects.contains(.recallDialogs(timelineId: "p1")))
        #expect(Self.published(effects).map(\.visible) == [false])
        #expect(Self.timers(effects) == [nil])
        #expect(core.dialog("p1") == nil)
        // A second recall, or one of an unknown timeline, does nothing.
        let effects1 = core.handle(.recall(timelineId: "p1"), now: Self.t0)
        #expect(effects1.isEmpty)
    }

    @Test func leavingHidesVisibleButtonsCancelsUnopenedTimelinesAndEmptiesTheStatus() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1", trackingId: "a"), room: Self.room), now: Self.t0)
        _ = core.handle(.offer(try Self.overlay("p2", trackingId: "b"), room: Self.room), now: Self.t0)
        _ = core.handle(.buttonData(try Self.buttonData(["timelineId": "p3", "visible": false])), now: Self.t0)
        let effects = core.handle(.removeAll, now: Self.t0 + .seconds(1))
        #expect(Self.cancels(effects).map(\.0) == ["a", "b"])
        #expect(Self.cancels(effects).allSatisfy { $0.1 == .removeAll })
        #expect(Self.published(effects).map(\.timelineId) == ["p1", "p2"])
        #expect(Self.published(effects).allSatisfy { !$0.visible })
        #expect(Self.statuses(effects).last == [])
        #expect(Self.timers(effects) == [nil])
        #expect(core.room == nil)
        #expect(core.buttons.isEmpty)
        // Nothing fades after leaving.
        let effects1 = core.handle(.timerFired, now: Self.t0 + .seconds(10))
        #expect(effects1.isEmpty)
    }

    @Test func leavingWithATenantWithoutButtonsPublishesNothing() throws {
        var core = PredictCore(tenant: "onlivetv")
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let effects = core.handle(.removeAll, now: Self.t0)
        #expect(Self.published(effects).isEmpty)
        #expect(Self.statuses(effects).last == [])
        #expect(Self.cancels(effects).count == 1)
    }

    // MARK: Results

    @Test func aResultIsSavedAndPostedIntoTheDialogs() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        let counts: JSONValue = ["answer1": 12, "answer2": 30]
        let effects = core.handle(.result(timelineId: "p1", counts: counts), now: Self.t0)
        #expect(effects.contains(.saveResult(timelineId: "p1", counts: counts)))
        #expect(effects.contains(.post(timelineId: "p1", key: "UPDATE_COUTER", data: counts)))
        #expect(core.results["p1"] == counts)
    }

    /// Results of timelines never seen in the room were kept in the store for ever (issue 21,
    /// item 10): only this room's timelines' results are written; any result is still posted.
    @Test func aResultOfATimelineNeverSeenInTheRoomIsNotKept() throws {
        var core = PredictCore()
        let effects = core.handle(.result(timelineId: "elsewhere", counts: ["answer1": 1]), now: Self.t0)
        #expect(Self.saves(effects).isEmpty)
        #expect(effects.contains(.post(timelineId: "elsewhere", key: "UPDATE_COUTER", data: ["answer1": 1])))
        #expect(core.results.isEmpty)
        _ = core.handle(.buttonData(try #require(PredictInput.ButtonData(["timelineId": "buttoned", "visible": true]))), now: Self.t0)
        #expect(Self.saves(core.handle(.result(timelineId: "buttoned", counts: 2), now: Self.t0)) == ["buttoned"])
    }

    /// A core that knows predict timelines `ids` in the room.
    private func core(knowing ids: [String]) throws -> PredictCore {
        var core = PredictCore()
        for id in ids { _ = core.handle(.offer(try Self.overlay(id, trackingId: "t-\(id)"), room: Self.room), now: Self.t0) }
        return core
    }

    @Test func writesGoOneAtATimeInOrder() throws {
        var core = try core(knowing: ["a", "b", "c"])
        let effects1 = core.handle(.result(timelineId: "a", counts: 1), now: Self.t0)
        #expect(Self.saves(effects1) == ["a"])
        let effects2 = core.handle(.result(timelineId: "b", counts: 2), now: Self.t0)
        #expect(Self.saves(effects2).isEmpty)
        let effects3 = core.handle(.result(timelineId: "c", counts: 3), now: Self.t0)
        #expect(Self.saves(effects3).isEmpty)
        #expect(core.saving == "a")
        let effects4 = core.handle(.resultSaved(timelineId: "a", failed: false), now: Self.t0)
        #expect(effects4 == [.saveResult(timelineId: "b", counts: 2)])
        let effects5 = core.handle(.resultSaved(timelineId: "b", failed: true), now: Self.t0)
        #expect(effects5 == [.saveResult(timelineId: "c", counts: 3)])
        let effects6 = core.handle(.resultSaved(timelineId: "c", failed: false), now: Self.t0)
        #expect(effects6.isEmpty)
        #expect(core.saving == nil)
    }

    @Test func aLaterResultReplacesTheOneWaitingForTheSameTimeline() throws {
        var core = try core(knowing: ["a", "b"])
        _ = core.handle(.result(timelineId: "a", counts: 1), now: Self.t0)
        _ = core.handle(.result(timelineId: "b", counts: 2), now: Self.t0)
        _ = core.handle(.result(timelineId: "b", counts: 5), now: Self.t0)
        let effects1 = core.handle(.resultSaved(timelineId: "a", failed: false), now: Self.t0)
        #expect(effects1 == [.saveResult(timelineId: "b", counts: 5)])
        let effects2 = core.handle(.resultSaved(timelineId: "b", failed: false), now: Self.t0)
        #expect(effects2.isEmpty)
    }

    @Test func theTimelineBeingWrittenIsWrittenAgainWithItsLaterResult() throws {
        var core = try core(knowing: ["a"])
        _ = core.handle(.result(timelineId: "a", counts: 1), now: Self.t0)
        _ = core.handle(.result(timelineId: "a", counts: 2), now: Self.t0)
        let effects1 = core.handle(.resultSaved(timelineId: "a", failed: false), now: Self.t0)
        #expect(effects1 == [.saveResult(timelineId: "a", counts: 2)])
    }

    @Test func aStaleSaveReportIsIgnored() throws {
        var core = try core(knowing: ["a"])
        _ = core.handle(.result(timelineId: "a", counts: 1), now: Self.t0)
        let effects1 = core.handle(.resultSaved(timelineId: "other", failed: false), now: Self.t0)
        #expect(effects1.isEmpty)
        #expect(core.saving == "a")
    }

    /// While the store does not answer, timelines come and go (128 known at once): the results
    /// waiting for it are bounded all the same.
    @Test func writesWaitingForTheStoreAreBounded() throws {
        var core = try core(knowing: ["first"])
        _ = core.handle(.result(timelineId: "first", counts: 0), now: Self.t0)
        for index in 0..<PredictCore.maxWaitingSaves {
            _ = core.handle(.offer(try Self.overlay("t\(index)", trackingId: "k\(index)"), room: Self.room), now: Self.t0)
            let effects1 = core.handle(.result(timelineId: "t\(index)", counts: 0), now: Self.t0)
            #expect(!effects1.contains(.resultNotSaved(timelineId: "t\(index)")))
        }
        _ = core.handle(.offer(try Self.overlay("one-too-many"), room: Self.room), now: Self.t0)
        let refused = core.handle(.result(timelineId: "one-too-many", counts: 7), now: Self.t0)
        #expect(refused.contains(.resultNotSaved(timelineId: "one-too-many")))
        // It is still posted.
        #expect(refused.contains(.post(timelineId: "one-too-many", key: "UPDATE_COUTER", data: 7)))
    }

    @Test func aRecallForgetsTheTimelinesResult() throws {
        var core = PredictCore()
        _ = core.handle(.offer(try Self.overlay("p1"), room: Self.room), now: Self.t0)
        _ = core.handle(.result(timelineId: "p1", counts: 3), now: Self.t0)
        _ = core.handle(.recall(timelineId: "p1"), now: Self.t0)
        #expect(core.results["p1"] == nil)
    }
}
