import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// The playback decision core against a test clock: every rule of IPC.md's Playback tickets.
@Suite struct PlaybackCoreTests {
    static let now: Int64 = 1_796_032_000_000
    static let episode1 = EpisodeRef(filmId: "f1", episodeNo: 1)
    static let episode2 = EpisodeRef(filmId: "f1", episodeNo: 2)

    static func ticket(_ vid: String, secondsLeft: Int64 = 600) -> PlayTicket {
        PlayTicket(vid: vid, playAuthToken: "pat-\(vid)", expiresAtMs: now + secondsLeft * 1000)
    }

    /// A logged-in core that started episode 1 and got its ticket (and episode 2's as `next`).
    static func playingCore(secondsLeft: Int64 = 600, nextSecondsLeft: Int64 = 600) -> PlaybackCore {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(episode1, unionInfo: "u-1", drmKek: "k-1"), nowMs: now)
        _ = core.handle(.fetched(requestId: 1, .reply(.tickets(
            current: ticket("v-1", secondsLeft: secondsLeft),
            next: [NextTicket(episodeNo: 2, ticket: ticket("v-2", secondsLeft: nextSecondsLeft))]))), nowMs: now)
        return core
    }

    static func sends(_ effects: [PlaybackEffect]) -> [PlayRequest] {
        effects.compactMap { if case .send(let request) = $0 { return request } else { return nil } }
    }

    static func states(_ effects: [PlaybackEffect]) -> [PlaybackScreen] {
        effects.compactMap { if case .state(_, let screen) = $0 { return screen } else { return nil } }
    }

    static func plays(_ effects: [PlaybackEffect]) -> [(EpisodeRef, String, Double)] {
        effects.compactMap { if case .play(let episode, let ticket, let startAt) = $0 { return (episode, ticket.vid, startAt) } else { return nil } }
    }

    static func reply(_ effects: [PlaybackEffect]) -> Result<JSONValue, RPCError>? {
        for case .reply(let result) in effects { return result }
        return nil
    }

    // MARK: Device values and login

    @Test(arguments: [
        ("(null)", "k"), ("nil", "k"), ("", "k"), ("  ", "k"), ("NULL", "k"), ("Undefined", "k"), (" \t\n", "k"),
        ("u", "(NULL)"), ("u", " nil "), ("u", ""),
    ])
    func unusableDeviceValuesAreRefusedWithNothingSent(_ unionInfo: String, _ drmKek: String) {
        var core = PlaybackCore(loggedIn: true)
        let effects = core.handle(.start(Self.episode1, unionInfo: unionInfo, drmKek: drmKek), nowMs: Self.now)
        let field = DeviceValues.isUsable(unionInfo) ? "drmKek" : "unionInfo"
        #expect(Self.sends(effects).isEmpty)
        #expect(effects.contains(.refusedDeviceValue(field: field)))
        #expect(Self.states(effects) == [.message("Couldn't load this episode", canRetry: false, code: .deviceValues)])
        guard case .failure(let error)? = Self.reply(effects) else {
            Issue.record("expected an error reply, got \(effects)")
            return
        }
        #expect(error.name == "interactive.InvalidDeviceValues")
        #expect(error.data?["field"] == .string(field))
        #expect(error.message == "the player's SDK gave an unusable \(field)")
    }

    @Test func missingDeviceValuesAreRefusedToo() {
        var core = PlaybackCore(loggedIn: true)
        let effects = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: nil), nowMs: Self.now)
        #expect(effects.contains(.refusedDeviceValue(field: "drmKek")))
        #expect(Self.sends(effects).isEmpty)
    }

    @Test func withoutALoginNothingIsSent() {
        var core = PlaybackCore(loggedIn: false)
        let effects = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        #expect(Self.sends(effects).isEmpty)
        guard case .failure(let error)? = Self.reply(effects) else {
            Issue.record("expected an error reply, got \(effects)")
            return
        }
        #expect(error.name == "interactive.NotLoggedIn")
    }

    // MARK: Start

    @Test func startLoadsThenPlaysAndPreloadsTheNextEpisodes() {
        var core = PlaybackCore(loggedIn: true)
        let started = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        #expect(Self.states(started) == [.loading])
        #expect(Self.sends(started) == [PlayRequest(id: 1, episode: Self.episode1, device: DeviceValues(unionInfo: "u", drmKek: "k"))])
        #expect(Self.reply(started) == .success(["filmId": "f1", "episodeNo": 1, "state": "loading"]))
        let replied = core.handle(.fetched(requestId: 1, .reply(.tickets(
            current: Self.ticket("v-1"),
            next: [NextTicket(episodeNo: 2, ticket: Self.ticket("v-2")), NextTicket(episodeNo: 3, ticket: Self.ticket("v-3"))]))),
            nowMs: Self.now)
        #expect(replied == [
            .play(Self.episode1, Self.ticket("v-1"), startAt: 0), .state(Self.episode1, .playing),
            .preload(Self.episode2, Self.ticket("v-2")), .preload(EpisodeRef(filmId: "f1", episodeNo: 3), Self.ticket("v-3")),
        ])
        #expect(core.prefetched.count == 2)
    }

    @Test(arguments: [
        (PlayOutcome.locked, PlaybackScreen.paywall),
        (.unavailable, .message("This title is no longer available", canRetry: false, code: .unavailable)),
        (.notReady, .message("Not available yet", canRetry: false, code: .notReady)),
        (.busy, .message("Busy, try again in a moment", canRetry: true, code: .busy)),
        (.broken, .message("Couldn't load this episode", canRetry: true, code: .broken)),
    ])
    func eachOutcomeHasItsScreen(_ outcome: PlayOutcome, _ screen: PlaybackScreen) {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        let effects = core.handle(.fetched(requestId: 1, .reply(.refused(outcome))), nowMs: Self.now)
        #expect(effects == [.state(Self.episode1, screen)])
    }

    @Test(arguments: [PlayFetchResult.networkFailure, .timedOut, .undecodable])
    func noUsableReplyIsTakingLonger(_ result: PlayFetchResult) {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        let effects = core.handle(.fetched(requestId: 1, result), nowMs: Self.now)
        #expect(effects == [.state(Self.episode1, .message("Taking longer than usual", canRetry: true, code: .network))])
    }

    /// Issue 21, items 6 and 7: a play request refused with 401/403 says the session expired,
    /// with no retry (a Retry would loop on the same refusal), and every message has its code.
    @Test func aRefusedSessionIsAMessageWithoutRetry() {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        let effects = core.handle(.fetched(requestId: 1, .sessionRefused), nowMs: Self.now)
        #expect(effects == [.state(Self.episode1, .message("Your session has expired: sign in again", canRetry: false, code: .expired))])

        var playing = Self.playingCore()
        _ = playing.handle(.playerError(position: 3), nowMs: Self.now)
        let refresh = playing.handle(.fetched(requestId: 2, .sessionRefused), nowMs: Self.now)
        #expect(Self.states(refresh) == [.sessionExpired])
    }

    @Test func theStateEventCarriesTheCode() {
        let paywall = PlaybackEventData.state(Self.episode1, .paywall).data
        #expect(paywall == ["filmId": "f1", "episodeNo": 1, "state": "paywall", "code": "locked"])
        let network = PlaybackEventData.state(Self.episode1, .takingLonger).data
        #expect(network["code"] == "network" && network["canRetry"] == true)
        #expect(PlaybackEventData.state(nil, .loading).data["code"] == nil)
        #expect(PlaybackStateEvent(data: network)?.data == network)
    }

    @Test func aPrefetchedTicketStartsAtOnceAndTheRequestIsStillSent() {
        var core = Self.playingCore()
        let effects = core.handle(.start(Self.episode2, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        #expect(Self.states(effects) == [.loading, .playing])
        #expect(Self.plays(effects).map(\.1) == ["v-2"])
        #expect(Self.sends(effects).map(\.episode) == [Self.episode2])
        #expect(Self.reply(effects) == .success(["filmId": "f1", "episodeNo": 2, "state": "playing"]))
        // The reply does not start the episode again, and a failed one does not interrupt it.
        let replied = core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v-2b"), next: []))), nowMs: Self.now)
        #expect(Self.plays(replied).isEmpty && Self.states(replied).isEmpty)
        var failing = Self.playingCore()
        _ = failing.handle(.start(Self.episode2, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        #expect(failing.handle(.fetched(requestId: 2, .timedOut), nowMs: Self.now).isEmpty)
    }

    @Test func startingTheEpisodeThatPlaysKeepsItPlaying() {
        var core = Self.playingCore()
        let started = core.handle(.start(Self.episode1, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        #expect(Self.states(started) == [.loading])
        let failed = core.handle(.fetched(requestId: 2, .networkFailure), nowMs: Self.now)
        #expect(failed == [.state(Self.episode1, .playing)])
        _ = core.handle(.start(Self.episode1, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        let replied = core.handle(.fetched(requestId: 3, .reply(.tickets(current: Self.ticket("v-1b"), next: []))), nowMs: Self.now)
        #expect(replied == [.state(Self.episode1, .playing)])
        #expect(core.current?.ticket.vid == "v-1")
    }

    @Test func aPrefetchedTicketWithAMinuteOrLessLeftIsNotUsed() {
        var core = Self.playingCore(nextSecondsLeft: 60)
        let effects = core.handle(.start(Self.episode2, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        #expect(Self.states(effects) == [.loading])
        #expect(Self.plays(effects).isEmpty)
        #expect(core.prefetched.isEmpty)
    }

    @Test func newDeviceValuesOrASessionChangeDropThePrefetchedTickets() {
        var core = Self.playingCore()
        let effects = core.handle(.start(Self.episode2, unionInfo: "u-other", drmKek: "k-1"), nowMs: Self.now)
        #expect(Self.plays(effects).isEmpty)
        var loggedAgain = Self.playingCore()
        _ = loggedAgain.handle(.sessionChanged(loggedIn: true), nowMs: Self.now)
        #expect(loggedAgain.prefetched.isEmpty)
        #expect(Self.plays(loggedAgain.handle(.start(Self.episode2, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)).isEmpty)
    }

    /// A reply that arrives after the viewer changed would play the previous viewer's ticket.
    @Test func aSessionChangeDropsARequestStillInFlight() {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(Self.episode1, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        let changed = core.handle(.sessionChanged(loggedIn: true), nowMs: Self.now)
        #expect(Self.states(changed) == [.message("Couldn't load this episode", canRetry: true, code: .broken)])
        let late = core.handle(.fetched(requestId: 1, .reply(.tickets(current: Self.ticket("v-1"), next: []))), nowMs: Self.now)
        #expect(Self.plays(late).isEmpty)
    }

    @Test func aSupersededStartsReplyIsIgnored() {
        var core = PlaybackCore(loggedIn: true)
        _ = core.handle(.start(Self.episode1, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        _ = core.handle(.start(Self.episode2, unionInfo: "u", drmKek: "k"), nowMs: Self.now)
        #expect(core.handle(.fetched(requestId: 1, .reply(.tickets(current: Self.ticket("v-1"), next: []))), nowMs: Self.now).isEmpty)
        let second = core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v-2"), next: []))), nowMs: Self.now)
        #expect(Self.plays(second).map(\.1) == ["v-2"])
    }

    // MARK: Refresh

    @Test func anErrorRefreshesOnceAndResumesAtThePosition() {
        var core = Self.playingCore()
        let error = core.handle(.playerError(position: 42.5), nowMs: Self.now)
        #expect(Self.sends(error).map(\.episode) == [Self.episode1])
        #expect(Self.reply(error) == .success(["filmId": "f1", "episodeNo": 1, "state": "playing", "refreshing": true]))
        let refreshed = core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v-1b"), next: []))), nowMs: Self.now)
        #expect(refreshed == [.play(Self.episode1, Self.ticket("v-1b"), startAt: 42.5), .state(Self.episode1, .playing)])
        // A second error before the next start: the retry message, nothing sent.
        let second = core.handle(.playerError(position: 50), nowMs: Self.now)
        #expect(Self.sends(second).isEmpty)
        #expect(Self.states(second) == [.message("Couldn't load this episode", canRetry: true, code: .broken)])
        // A new start allows one refresh again.
        _ = core.handle(.start(Self.episode1, unionInfo: "u-1", drmKek: "k-1"), nowMs: Self.now)
        #expect(Self.sends(core.handle(.playerError(position: 1), nowMs: Self.now)).count == 1)
    }

    @Test func aFailedRefreshIsTheRetryMessage() {
        var core = Self.playingCore()
        _ = core.handle(.playerError(position: 10), nowMs: Self.now)
        let effects = core.handle(.fetched(requestId: 2, .reply(.refused(.busy))), nowMs: Self.now)
        #expect(effects == [.state(Self.episode1, .message("Couldn't load this episode", canRetry: true, code: .broken))])
    }

    @Test func aSecondErrorWhileTheRefreshIsPendingEndsIt() {
        var core = Self.playingCore()
        _ = core.handle(.playerError(position: 10), nowMs: Self.now)
        let second = core.handle(.playerError(position: 11), nowMs: Self.now)
        #expect(Self.sends(second).isEmpty)
        #expect(core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v"), next: []))), nowMs: Self.now).isEmpty)
    }

    @Test func anErrorWithoutACurrentEpisodeIsTheRetryMessage() {
        var core = PlaybackCore(loggedIn: true)
        let effects = core.handle(.playerError(position: 3), nowMs: Self.now)
        #expect(Self.sends(effects).isEmpty)
        #expect(Self.states(effects) == [.message("Couldn't load this episode", canRetry: true, code: .broken)])
    }

    @Test func foregroundRefreshesOnlyATicketWithAMinuteOrLessLeft() {
        var expiring = Self.playingCore(secondsLeft: 30)
        let refreshed = expiring.handle(.foreground(position: 12), nowMs: Self.now)
        #expect(Self.sends(refreshed).map(\.episode) == [Self.episode1])
        let replied = expiring.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v-1b"), next: []))), nowMs: Self.now)
        #expect(Self.plays(replied).map(\.2) == [12])
        var fresh = Self.playingCore(secondsLeft: 600)
        let untouched = fresh.handle(.foreground(position: 12), nowMs: Self.now)
        #expect(Self.sends(untouched).isEmpty && Self.states(untouched).isEmpty)
        #expect(Self.reply(untouched) == .success(["filmId": "f1", "episodeNo": 1, "state": "playing", "refreshing": false]))
        // The same ticket, ten minutes later, has expired: the test clock moves, nothing sleeps.
        #expect(Self.sends(fresh.handle(.foreground(position: 12), nowMs: Self.now + 600_000)).count == 1)
    }

    @Test func foregroundResetsTheOncePerStartFlag() {
        var core = Self.playingCore(secondsLeft: 30)
        _ = core.handle(.playerError(position: 5), nowMs: Self.now)
        _ = core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v-1b", secondsLeft: 20), next: []))), nowMs: Self.now)
        #expect(core.refreshedAfterError)
        #expect(Self.sends(core.handle(.foreground(position: 9), nowMs: Self.now)).count == 1)
    }

    /// A ticket that never lasts a minute made every `playback.foreground` a play request: at
    /// most one refresh per `foregroundRefreshIntervalMs` now.
    @Test func foregroundRefreshesAtMostOncePerInterval() {
        var core = Self.playingCore(secondsLeft: 30)
        var requests = 0
        for second in 0..<60 {
            let nowMs = Self.now + Int64(second) * 1000
            let effects = core.handle(.foreground(position: Double(second)), nowMs: nowMs)
            for request in Self.sends(effects) {
                requests += 1
                _ = core.handle(.fetched(requestId: request.id, .reply(.tickets(current: Self.ticket("v", secondsLeft: 30), next: []))),
                                nowMs: nowMs)
            }
        }
        #expect(requests == 2)
    }

    /// However many episodes a backend prefetches over many starts, `maxPrefetched` are kept.
    @Test func prefetchedTicketsAreBounded() {
        var core = PlaybackCore(loggedIn: true)
        for start in 0..<20 {
            let effects = core.handle(.start(EpisodeRef(filmId: "f1", episodeNo: 1), unionInfo: "u", drmKek: "k"), nowMs: Self.now)
            let next = (0..<10).map { NextTicket(episodeNo: 2 + start * 10 + $0, ticket: Self.ticket("v", secondsLeft: 600 + Int64(start))) }
            for request in Self.sends(effects) {
                _ = core.handle(.fetched(requestId: request.id, .reply(.tickets(current: Self.ticket("v-1"), next: next))), nowMs: Self.now)
            }
        }
        #expect(core.prefetched.count == PlaybackCore.maxPrefetched)
        #expect(core.prefetched.keys.map(\.episodeNo).min() ?? 0 > 2 + 10 * 16 - 1, "the tickets expiring first went")
    }

    @Test func stopForgetsEverythingAndLateRepliesAreIgnored() {
        var core = Self.playingCore()
        _ = core.handle(.playerError(position: 5), nowMs: Self.now)
        let stopped = core.handle(.stop, nowMs: Self.now)
        #expect(Self.reply(stopped) == .success(["stopped": true]))
        #expect(core.current == nil && core.prefetched.isEmpty)
        #expect(core.handle(.fetched(requestId: 2, .reply(.tickets(current: Self.ticket("v"), next: []))), nowMs: Self.now).isEmpty)
    }
}

/// Decoding a `v1/play` reply.
@Suite struct PlayReplyTests {
    @Test(arguments: [
        ("2026-11-30T10:00:00Z", Int64(1_796_032_800_000)), ("2026-11-30T10:00:00.123Z", 1_796_032_800_123),
        ("2026-11-30T10:00:00.5Z", 1_796_032_800_500), ("2026-11-30T10:00:00.123456Z", 1_796_032_800_123),
        ("2026-11-30T17:00:00+07:00", 1_796_032_800_000), ("2026-11-30T09:30:00.000-00:30", 1_796_032_800_000),
        ("1970-01-01T00:00:00Z", 0), ("2024-02-29T00:00:00Z", 1_709_164_800_000),
    ])
    func internetDateTimesParse(_ text: String, _ ms: Int64) {
        #expect(InternetDateTime.milliseconds(from: text) == ms)
    }

    @Test(arguments: ["", "2026-11-30", "2026-11-30T10:00:00", "2026-11-30 10:00:00Z", "30/11/2026 10:00", "2026-13-01T00:00:00Z",
                      "2025-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T10:00:00.Z", "2026-11-30T10:00:00Zjunk",
                      "2026-11-30T10:00:00+0700", "٢٠٢٦-11-30T10:00:00Z"])
    func otherDatesDoNotParse(_ text: String) {
        #expect(InternetDateTime.milliseconds(from: text) == nil)
    }

    /// A time before the tickets below expire (2026-11-30T09:00:00Z).
    static let replyNow: Int64 = 1_796_029_200_000

    static let ticketJSON: JSONValue = ["vid": "v-3", "playAuthToken": "t", "expiresAt": "2026-11-30T10:00:00.123Z",
                                        "subtitles": [["lang": "vi", "url": "https://x/vi.vtt"]]]

    @Test func aTicketsReplyDecodes() throws {
        let json: JSONValue = ["ok": true, "current": Self.ticketJSON,
                               "next": [["episodeNo": 4, "ticket": ["vid": "v-4", "playAuthToken": "t4", "expiresAt": "2026-11-30T10:00:00Z",
                                                                    "subtitles": []]]]]
        guard case .tickets(let current, let next)? = PlayReply(json: json, nowMs: Self.replyNow) else {
            Issue.record("did not decode")
            return
        }
        #expect(current.vid == "v-3" && current.expiresAtMs == 1_796_032_800_123 && current.subtitles.count == 1)
        #expect(next.map(\.episodeNo) == [4])
        #expect(PlayReply(json: ["ok": true, "current": Self.ticketJSON], nowMs: Self.replyNow) == .tickets(current: current, next: []))
    }

    @Test func refusalsDecodeAndAnUnknownOrMissingOutcomeIsBroken() {
        #expect(PlayReply(json: ["ok": false, "outcome": "locked"], nowMs: Self.replyNow) == .refused(.locked))
        #expect(PlayReply(json: ["ok": false, "outcome": "notReady"], nowMs: Self.replyNow) == .refused(.notReady))
        #expect(PlayReply(json: ["ok": false, "outcome": "exploded"], nowMs: Self.replyNow) == .refused(.broken))
        #expect(PlayReply(json: ["ok": false], nowMs: Self.replyNow) == .refused(.broken))
        #expect(PlayReply(json: ["ok": true], nowMs: Self.replyNow) == .refused(.broken))
    }

    static func reply(current: JSONValue, next: [JSONValue]? = nil) -> JSONValue {
        ["ok": true, "current": current, "next": next.map(JSONValue.array) ?? .null]
    }

    static func ticket(vid: JSONValue = "v", token: JSONValue = "t", expiresAt: JSONValue = "2026-11-30T10:00:00Z",
                       subtitles: JSONValue = []) -> JSONValue {
        ["vid": vid, "playAuthToken": token, "expiresAt": expiresAt, "subtitles": subtitles]
    }

    /// Ticket values a player would get whole (issue 20, item 4) are refused: over 512
    /// characters, control characters, an expired current ticket, an instant RFC 3339 cannot write.
    @Test(arguments: [
        PlayReplyTests.ticket(vid: .string(String(repeating: "v", count: 513))),
        PlayReplyTests.ticket(token: .string(String(repeating: "t", count: 64 << 10))),
        PlayReplyTests.ticket(vid: "v\u{1B}[2J"), PlayReplyTests.ticket(token: "t\nX-Injected: 1"), PlayReplyTests.ticket(vid: "v\u{2028}"),
        PlayReplyTests.ticket(vid: ""), PlayReplyTests.ticket(vid: 7),
        PlayReplyTests.ticket(expiresAt: "2026-11-30T08:59:59Z"), PlayReplyTests.ticket(expiresAt: "9999-12-31T23:00:00-05:00"),
        PlayReplyTests.ticket(expiresAt: .string("2026-11-30T10:00:00." + String(repeating: "1", count: 100) + "Z")),
    ])
    func hostileTicketValuesAreRefused(_ current: JSONValue) {
        #expect(PlayReply(json: Self.reply(current: current), nowMs: Self.replyNow) == nil)
    }

    @Test func valuesAtTheLimitsAreTaken() {
        let long = String(repeating: "é", count: 512)
        let reply = PlayReply(json: Self.reply(current: Self.ticket(vid: .string(long), token: .string(long), expiresAt: "9999-12-31T23:59:59.999Z")),
                              nowMs: Self.replyNow)
        guard case .tickets(let current, _)? = reply else { return #expect(Bool(false), "\(String(describing: reply))") }
        #expect(current.vid == long && current.expiresAtMs == InternetDateTime.latestMs)
    }

    /// Only loadable subtitle URLs reach players, and a bounded list of them.
    @Test func subtitlesAreCheckedEntryByEntry() {
        let entries: [JSONValue] = [
            ["lang": "vi", "url": "https://cdn/vi.vtt", "label": "Tiếng Việt", "default": true, "extra": ["x": 1]],
            ["lang": "js", "url": "javascript:alert(1)"], ["lang": "file", "url": "file:///etc/passwd"], ["lang": "none"], "en",
            ["lang": .string("x\u{7}"), "url": "http://cdn/x.vtt"],
        ] + (0..<40).map { ["lang": .string("l\($0)"), "url": .string("http://cdn/\($0).vtt")] }
        let reply = PlayReply(json: Self.reply(current: Self.ticket(subtitles: .array(entries))), nowMs: Self.replyNow)
        guard case .tickets(let current, _)? = reply else { return #expect(Bool(false), "\(String(describing: reply))") }
        #expect(current.subtitles.count == PlayTicket.maxSubtitles)
        #expect(current.subtitles.first == ["lang": "vi", "url": "https://cdn/vi.vtt", "label": "Tiếng Việt", "default": true])
        #expect(current.subtitles[1] == ["url": "http://cdn/x.vtt"], "a text with a control character is dropped, the entry kept")
        #expect(!current.subtitles.contains { $0["url"]?.stringValue?.hasPrefix("http") != true })
    }

    /// 20,000 `next` entries left 21,003 prefetched tickets: the first `maxNext` are read, the
    /// rest not even looked at, and those already expired are dropped.
    @Test func nextIsBoundedAndExpiredEntriesAreDropped() {
        let next: [JSONValue] = [["episodeNo": 2, "ticket": Self.ticket(expiresAt: "2026-11-30T08:00:00Z")]]
            + (3..<2_003).map { ["episodeNo": .number(Double($0)), "ticket": Self.ticket()] }
            + [["episodeNo": "broken"]]
        let reply = PlayReply(json: Self.reply(current: Self.ticket(), next: next), nowMs: Self.replyNow)
        guard case .tickets(_, let kept)? = reply else { return #expect(Bool(false), "\(String(describing: reply))") }
        #expect(kept.map(\.episodeNo) == Array(3..<12))
    }

    @Test(arguments: [
        JSONValue.string("<html>"), ["outcome": "locked"], ["ok": "yes"],
        ["ok": true, "current": ["vid": "v", "playAuthToken": "t", "expiresAt": "30/11/2026 10:00"]],
        ["ok": true, "current": ["vid": "v", "expiresAt": "2026-11-30T10:00:00Z"]],
        ["ok": true, "current": PlayReplyTests.ticketJSON, "next": [["episodeNo": 4]]],
        ["ok": true, "current": PlayReplyTests.ticketJSON, "next": "none"],
    ])
    func otherShapesDoNotDecode(_ json: JSONValue) {
        #expect(PlayReply(json: json, nowMs: Self.replyNow) == nil)
    }
}
