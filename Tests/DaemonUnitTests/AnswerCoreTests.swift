import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// The answer flow's decision core against a test clock: answer once, the login, fanclub, VIP and
/// bet rules, the bet confirmation and its deadline, the REST replies and failures, and an
/// overlay leaving while its answer is in flight.
@Suite struct AnswerCoreTests {
    static let t0 = ContinuousClock.now
    static let nowMs: Int64 = 1_796_032_000_000
    static let alice = ViewerSession(token: "token-alice", userId: "alice", displayName: nil)

    static func context(session: ViewerSession = alice, fanclub: Bool = false, mode: RoomMode = .live,
                        configured: Bool = true) -> RoomContext {
        var config: JSONObject = ["os": "linuxstb", "answerConfirmTimeoutMs": 30_000]
        if configured {
            config["tenant"] = "onlivev2"
            config["apiUrl"] = "https://api.example"
        }
        return RoomContext(mediaId: "m1", mode: mode, fanclub: fanclub, session: session, settings: Settings(config),
                           socketId: "s-1")
    }

    static func record(_ timelineId: String = "tl1", overlayId: String = "ov-1", type: Int = 1, trackingId: String? = "trk-1",
                       extra: JSONObject = [:]) throws -> OnScreenOverlay {
        var members: JSONObject = ["timelineId": .string(timelineId), "typeTimeline": .number(Double(type)),
                                            "url": "https://cdn.example/quiz.html"]
        members.merge(extra) { $1 }
        let overlay = try #require(IncomingOverlay(payload: .object(members)))
        return OnScreenOverlay(overlayId: overlayId, overlay: overlay, url: "https://cdn.example/quiz.html", shownAt: nowMs,
                               trackingId: trackingId)
    }

    static let bet: JSONObject = ["requireBet": true, "betAmount": 50]

    /// The result the effects end the attempt with, if any.
    static func result(_ effects: [AnswerEffect]) -> AnswerResult? {
        effects.lazy.compactMap { if case .result(_, _, let result) = $0 { return result } else { return nil } }.first
    }

    static func attempt(_ effects: [AnswerEffect]) -> Int? {
        effects.lazy.compactMap { effect -> Int? in
            switch effect {
            case .requestVIPStatus(let attempt, _, _), .postAction(let attempt, _, _): return attempt
            default: return nil
            }
        }.first
    }

    static func posted(_ effects: [AnswerEffect]) -> JSONValue? {
        effects.lazy.compactMap { if case .postAction(_, _, let body) = $0 { return body } else { return nil } }.first
    }

    static func tracked(_ effects: [AnswerEffect]) -> [TrackingEvent] {
        effects.compactMap { if case .track(let event) = $0 { return event } else { return nil } }
    }

    /// Starts an answer `"A"` for `record` in `context`.
    static func start(_ core: inout AnswerCore, _ record: OnScreenOverlay, _ context: RoomContext? = context(),
                      answered: Set<String> = []) -> [AnswerEffect] {
        core.start(overlayId: record.overlayId, answer: "A", record: record, context: context, answered: answered, nowMs: nowMs)
    }

    /// Starts a bet answer and lets VIP status allow the bet: the viewer is asked to confirm.
    static func askedToConfirm(_ core: inout AnswerCore, _ record: OnScreenOverlay) throws -> [AnswerEffect] {
        let id = try #require(attempt(start(&core, record)))
        return core.vipStatusReplied(id, .success(VIPStatus(vip: false, bet: true)), nowMs: nowMs, now: t0)
    }

    // MARK: The rules before any REST call

    @Test func aPlainAnswerIsPostedWithTheRoomAndViewer() throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        let effects = Self.start(&core, quiz)
        #expect(Self.tracked(effects) == [.answerAttempted(trackingId: "trk-1", at: Self.nowMs)])
        #expect(effects.contains(.submitting(overlayId: "ov-1", overlay: quiz.overlay)))
        #expect(Self.posted(effects) == ["mediaId": "m1", "timelineId": "tl1", "os": "linuxstb", "socketId": "s-1",
                                         "userId": "alice", "mode": "live", "answer": "A"])
        #expect(Self.result(effects) == nil)
        #expect(core.inFlight("tl1"))
    }

    @Test func aVODAnswerHasNoSocketId() throws {
        var core = AnswerCore()
        let body = Self.posted(Self.start(&core, try Self.record(trackingId: nil), Self.context(mode: .vod)))
        #expect(body?["socketId"] == .null)
        #expect(body?["mode"] == "vod")
    }

    @Test func aTimelineIsAnsweredOnceAndNotTwiceAtATime() throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        #expect(Self.result(Self.start(&core, quiz, answered: ["tl1"])) == .failure("already_answered"))
        #expect(!core.inFlight("tl1"))
        _ = Self.start(&core, quiz)
        // A second overlay of the same timeline while the first answer is in flight.
        let again = Self.start(&core, try Self.record(overlayId: "ov-2"))
        #expect(again == [.result(overlayId: "ov-2", overlay: quiz.overlay, .failure("already_answered"))])
    }

    @Test func anAnonymousViewerIsAskedToLogIn() throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        let effects = Self.start(&core, quiz, Self.context(session: .anonymous))
        #expect(effects == [.loginRequired(overlayId: "ov-1"), .result(overlayId: "ov-1", overlay: quiz.overlay, .failure("login_required"))])
        #expect(!core.inFlight("tl1"))
    }

    @Test func aFanclubOverlayNeedsAMember() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: ["requireFanclub": true])
        let refused = Self.start(&core, quiz, Self.context(fanclub: false))
        #expect(refused == [.fanclubRequired(overlayId: "ov-1", mediaId: "m1"),
                            .result(overlayId: "ov-1", overlay: quiz.overlay, .failure("fanclub_required"))])
        #expect(Self.posted(Self.start(&core, quiz, Self.context(fanclub: true))) != nil)
    }

    @Test func anUnconfiguredBackendFailsAsANetworkError() throws {
        var core = AnswerCore()
        let effects = Self.start(&core, try Self.record(), Self.context(configured: false))
        #expect(Self.result(effects) == .failure("network_error"))
        #expect(effects.contains { if case .cannotAnswer = $0 { return true } else { return false } })
        #expect(Self.tracked(effects).isEmpty, "nothing was attempted")
        #expect(!core.inFlight("tl1"))
    }

    @Test func anOverlayGoneOrARoomLeftBeforeTheFlowStartsEndsItSilently() throws {
        var core = AnswerCore()
        #expect(core.start(overlayId: "ov-1", answer: "A", record: nil, context: Self.context(), answered: [], nowMs: Self.nowMs).isEmpty)
        #expect(Self.start(&core, try Self.record(), nil).isEmpty)
    }

    // MARK: VIP status

    @Test func aVIPOverlayAsksTheVIPStatusFirst() throws {
        var core = AnswerCore()
        let effects = Self.start(&core, try Self.record(extra: ["requireVip": true]))
        guard case .requestVIPStatus(let id, let api, "m1")? = effects.first, effects.count == 1 else {
            Issue.record("no VIP status request: \(effects)")
            return
        }
        #expect(api.requester.token == "token-alice")
        let posted = core.vipStatusReplied(id, .success(VIPStatus(vip: true, bet: false)), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.posted(posted) != nil)
        #expect(Self.tracked(posted) == [.answerAttempted(trackingId: "trk-1", at: Self.nowMs)])
    }

    @Test func aViewerWhoIsNotVIPIsRefused() throws {
        var core = AnswerCore()
        let id = try #require(Self.attempt(Self.start(&core, try Self.record(extra: ["requireVip": true]))))
        let effects = core.vipStatusReplied(id, .success(VIPStatus(vip: false, bet: true)), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.result(effects) == .failure("vip_required"))
        #expect(!core.inFlight("tl1"))
    }

    @Test func aBetNotAllowedIsRefused() throws {
        var core = AnswerCore()
        let id = try #require(Self.attempt(Self.start(&core, try Self.record(extra: Self.bet))))
        let effects = core.vipStatusReplied(id, .success(VIPStatus(vip: true, bet: false)), nowMs: Self.nowMs, now: Self.t0)
        #expect(Self.result(effects) == .failure("bet_not_allowed"))
    }

    @Test(arguments: [
        (BackendCallError.unreachable("timed out"), "network_error"),
        (BackendCallError.refused(status: 401), "api_unauthorized"),
        (BackendCallError.httpStatus(502), "unknown_response"),
        (BackendCallError.unexpected("not JSON"), "unknown_response"),
    ])
    func aVIPStatusFailureEndsTheAttempt(_ error: BackendCallError, _ reason: String) throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: ["requireVip": true])
        let id = try #require(Self.attempt(Self.start(&core, quiz)))
        let effects = core.vipStatusReplied(id, .failure(error), nowMs: Self.nowMs, now: Self.t0)
        #expect(effects == [.vipStatusUnavailable(overlayId: "ov-1", overlay: quiz.overlay, error: error),
                            .result(overlayId: "ov-1", overlay: quiz.overlay, .failure(reason))])
        #expect(!core.inFlight("tl1"))
        // A reply for an attempt that ended is ignored.
        #expect(core.vipStatusReplied(id, .success(VIPStatus(vip: true, bet: true)), nowMs: Self.nowMs, now: Self.t0).isEmpty)
    }

    // MARK: The bet confirmation

    @Test func aBetIsConfirmedBeforeTheAnswerGoes() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: Self.bet)
        let asked = try Self.askedToConfirm(&core, quiz)
        #expect(asked == [.armTimer(at: Self.t0 + .milliseconds(30_000)),
                          .askConfirmation(AnswerConfirmEvent(overlayId: "ov-1", timelineId: "tl1", amount: 50, vip: false, bet: true,
                                                              timeoutMs: 30_000))])
        #expect(core.awaitsConfirmation("ov-1"))
        let accepted = try core.confirm("ov-1", accept: true, nowMs: Self.nowMs + 5)
        #expect(Self.posted(accepted) != nil)
        #expect(Self.tracked(accepted) == [.answerAttempted(trackingId: "trk-1", at: Self.nowMs + 5)])
        #expect(!core.awaitsConfirmation("ov-1"))
        // Confirmed once: a second reply finds nothing pending.
        #expect(throws: RPCError.self) { try core.confirm("ov-1", accept: true, nowMs: Self.nowMs) }
    }

    @Test func aDeclinedBetIsNotAnswered() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: Self.bet)
        _ = try Self.askedToConfirm(&core, quiz)
        #expect(try core.confirm("ov-1", accept: false, nowMs: Self.nowMs)
                == [.result(overlayId: "ov-1", overlay: quiz.overlay, .failure("bet_declined"))])
        #expect(!core.inFlight("tl1"))
    }

    @Test func aConfirmationNobodyAskedForIsRefused() throws {
        var core = AnswerCore()
        #expect(throws: RPCError.self) { try core.confirm("ov-1", accept: true, nowMs: Self.nowMs) }
        // Not while the VIP status is still being asked either.
        _ = Self.start(&core, try Self.record(extra: Self.bet))
        #expect(throws: RPCError.self) { try core.confirm("ov-1", accept: true, nowMs: Self.nowMs) }
    }

    @Test func nobodyWaitsForeverTheDeadlineDeclines() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: Self.bet)
        _ = try Self.askedToConfirm(&core, quiz)
        #expect(core.timerFired(now: Self.t0 + .milliseconds(29_999)).isEmpty)
        #expect(core.timerFired(now: Self.t0 + .milliseconds(30_000))
                == [.confirmationTimedOut(overlay: quiz.overlay, timeoutMs: 30_000),
                    .result(overlayId: "ov-1", overlay: quiz.overlay, .failure("bet_declined", detail: "timeout"))])
        // A reply after the deadline is refused.
        #expect(throws: RPCError.self) { try core.confirm("ov-1", accept: true, nowMs: Self.nowMs) }
        #expect(core.timerFired(now: Self.t0 + .seconds(60)).isEmpty)
    }

    @Test func theOverlayLeavingDeclinesItsConfirmation() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: Self.bet)
        _ = try Self.askedToConfirm(&core, quiz)
        #expect(core.overlayGone("ov-2").isEmpty)
        #expect(core.overlayGone("ov-1") == [.result(overlayId: "ov-1", overlay: quiz.overlay, .failure("bet_declined"))])
        #expect(!core.inFlight("tl1"))
        #expect(core.timerFired(now: Self.t0 + .seconds(60)).isEmpty, "the deadline of a confirmation that ended fires nothing")
    }

    @Test func anOverlayLeavingWhileItsVIPStatusIsAskedIsNotConfirmed() throws {
        var core = AnswerCore()
        let quiz = try Self.record(extra: Self.bet)
        let id = try #require(Self.attempt(Self.start(&core, quiz)))
        #expect(core.overlayGone("ov-1").isEmpty)
        // No confirmation is asked about an overlay no longer on screen: declined at once.
        #expect(core.vipStatusReplied(id, .success(VIPStatus(vip: false, bet: true)), nowMs: Self.nowMs, now: Self.t0)
                == [.result(overlayId: "ov-1", overlay: quiz.overlay, .failure("bet_declined"))])
        #expect(!core.inFlight("tl1"))
    }

    @Test func anAnswerInFlightOutlivesItsOverlay() throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        let id = try #require(Self.attempt(Self.start(&core, quiz)))
        // The backend may have taken it already: its result is still told.
        #expect(core.overlayGone("ov-1").isEmpty)
        #expect(Self.result(core.actionReplied(id, .success(data: .null), nowMs: Self.nowMs)) == .success(.null))
    }

    // MARK: POST /api/actions

    @Test func aTakenAnswerMarksTheTimelineThenTellsThePlayers() throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        let id = try #require(Self.attempt(Self.start(&core, quiz)))
        let effects = core.actionReplied(id, .success(data: ["score": 3]), nowMs: Self.nowMs + 40)
        #expect(effects == [
            .markAnswered(timelineId: "tl1", room: RoomKey(mediaId: "m1", mode: .live), viewer: "user:alice"),
            .storeAnswered(viewer: "user:alice", mediaId: "m1", timelineId: "tl1", overlay: quiz.overlay),
            .track(.answerSucceeded(trackingId: "trk-1", at: Self.nowMs + 40)),
            .result(overlayId: "ov-1", overlay: quiz.overlay, .success(["score": 3])),
        ])
        #expect(!core.inFlight("tl1"))
        // The reply is taken once.
        #expect(core.actionReplied(id, .success(data: .null), nowMs: Self.nowMs).isEmpty)
    }

    @Test func aConfirmedBetTellsTheTemplate() throws {
        var core = AnswerCore()
        _ = try Self.askedToConfirm(&core, try Self.record(extra: Self.bet))
        let id = try #require(Self.attempt(try core.confirm("ov-1", accept: true, nowMs: Self.nowMs)))
        let effects = core.actionReplied(id, .success(data: .null), nowMs: Self.nowMs)
        #expect(effects.last == .post(overlayId: "ov-1", key: "UPDATE_CONFIRM", data: ["timelineId": "tl1", "success": true]))
    }

    @Test func aLuckyDrawTellsTheTemplateItsNumber() throws {
        var core = AnswerCore()
        let id = try #require(Self.attempt(Self.start(&core, try Self.record(type: 5))))
        let effects = core.actionReplied(id, .success(data: ["number": 17]), nowMs: Self.nowMs)
        #expect(effects.last == .post(overlayId: "ov-1", key: "UPDATE_NUMBER_LUCKY", data: ["number": 17]))
        let other = try #require(Self.attempt(Self.start(&core, try Self.record("tl2", type: 5))))
        let noNumber = core.actionReplied(other, .success(data: ["number": .null]), nowMs: Self.nowMs)
        #expect(!noNumber.contains { if case .post = $0 { return true } else { return false } })
    }

    @Test(arguments: [("network_error", "network"), ("api_unauthorized", "api"), ("api_ALREADY", "api"), ("unknown_response", "api")])
    func aRefusedOrFailedAnswerIsTrackedAndTold(_ reason: String, _ step: String) throws {
        var core = AnswerCore()
        let quiz = try Self.record()
        let id = try #require(Self.attempt(Self.start(&core, quiz)))
        let effects = core.actionReplied(id, .failure(reason: reason, step: step), nowMs: Self.nowMs + 9)
        #expect(effects == [.track(.answerFailed(trackingId: "trk-1", reason: reason, step: step, at: Self.nowMs + 9)),
                            .result(overlayId: "ov-1", overlay: quiz.overlay, .failure(reason))])
        // Failed, not answered: a retry is a new attempt.
        #expect(Self.posted(Self.start(&core, quiz)) != nil)
    }

    @Test func anUntrackedOverlayRecordsNoTracking() throws {
        var core = AnswerCore()
        let effects = Self.start(&core, try Self.record(trackingId: nil))
        #expect(Self.tracked(effects).isEmpty)
        let id = try #require(Self.attempt(effects))
        #expect(Self.tracked(core.actionReplied(id, .success(data: .null), nowMs: Self.nowMs)).isEmpty)
    }
}
