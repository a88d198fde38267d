import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Play tickets (issue 14, seed 004) against the real daemon and the reference backend's `v1/play`.
@Suite struct PlaybackTests {
    static let device: JSONValue = ["unionInfo": "union-1", "drmKek": "kek-1"]

    /// A daemon pointed at a reference backend, with a logged-in player subscribed to `playback.`.
    /// Keep it in a variable: the processes stop when it is released.
    final class Player: @unchecked Sendable {
        let backend: ReferenceBackend
        let daemon: DaemonProcess
        let client: DaemonConnection

        init(config: JSONValue? = nil, login: Bool = true, flags: ((ReferenceBackend) -> [String])? = nil) async throws {
            backend = try await ReferenceBackend()
            daemon = try await DaemonProcess(arguments: flags?(backend) ?? backend.daemonFlags())
            client = try await daemon.client()
            if let config { _ = try await client.call("config.set", config) }
            if login { try await LiveFixture.login(client, .alice) }
            try await client.subscribe(["playback."])
        }

        /// `playback.start`; the reply (the first screen state).
        @discardableResult
        func start(_ filmId: String, _ episodeNo: Int, device: JSONValue = PlaybackTests.device) async throws -> JSONValue {
            try await client.call("playback.start", ["filmId": .string(filmId), "episodeNo": .number(Double(episodeNo)), "device": device])
        }

        /// The error a `playback.start` got.
        func startError(_ filmId: String, _ episodeNo: Int, device: JSONValue = PlaybackTests.device) async throws -> RPCError {
            do {
                let result = try await start(filmId, episodeNo, device: device)
                throw TestFailure("playback.start succeeded: \(result)")
            } catch .rpc(let error) as IPCClientError {
                return error
            }
        }

        /// The next `playback.state` whose `state` is not `loading`.
        func settledState(timeoutMs: Int = 10_000) async throws -> JSONValue {
            try await client.waitForEvent("playback.state", timeoutMs: timeoutMs) { $0["state"] != "loading" }.data
        }

        /// How many play requests the backend counted for an episode.
        func requests(_ filmId: String, _ episodeNo: Int) async throws -> Int {
            try await backend.admin("GET", "/_admin/playback")["requests"]?["\(filmId)/\(episodeNo)"]?.intValue ?? 0
        }

        func playbackAdmin(_ body: JSONValue) async throws { try await backend.admin("POST", "/_admin/playback", body) }
    }

    // MARK: Device values and login

    @Test func unusableDeviceValuesAreRefusedWithNothingSent() async throws {
        let player = try await Player()
        for value in ["(null)", "nil", "", "  ", "NULL"] {
            let error = try await player.startError("f1", 1, device: ["unionInfo": .string(value), "drmKek": "kek-1"])
            #expect(error.name == "interactive.InvalidDeviceValues")
            #expect(error.data?["field"] == "unionInfo")
            let state = try await player.client.waitForEvent("playback.state").data
            #expect(state["state"] == "message")
            #expect(state["text"] == "Couldn't load this episode")
            #expect(state["canRetry"] == false)
        }
        let kek = try await player.startError("f1", 1, device: ["unionInfo": "union-1", "drmKek": "undefined"])
        #expect(kek.data?["field"] == "drmKek")
        #expect(try await player.backend.records("play-requests").isEmpty)
        #expect(try await player.requests("f1", 1) == 0)
        // Only the field's name is logged.
        #expect(try await player.daemon.waitForLog("unusable drmKek"))
        #expect(!player.daemon.stderr.contains("(null)") && !player.daemon.stderr.contains("undefined"))
    }

    @Test func withoutALoginNothingIsSent() async throws {
        let player = try await Player(login: false)
        #expect(try await player.startError("f1", 1).name == "interactive.NotLoggedIn")
        #expect(try await player.backend.records("play-requests").isEmpty)
    }

    // MARK: Start

    @Test func startPlaysTheTicketAndPreloadsTheNextEpisodes() async throws {
        let player = try await Player()
        let reply = try await player.start("f1", 1)
        #expect(reply["state"] == "loading")
        #expect(try await player.client.waitForEvent("playback.state").data["state"] == "loading")
        let play = try await player.client.waitForEvent("playback.play").data
        #expect(play["filmId"] == "f1" && play["episodeNo"] == 1 && play["vid"] == "f1-e1" && play["startAt"] == 0)
        #expect(play["playAuthToken"]?.stringValue?.hasPrefix("pat_") == true)
        #expect(play["subtitles"]?.arrayValue?.compactMap { $0["lang"]?.stringValue } == ["vi", "en"])
        #expect(try await player.client.waitForEvent("playback.state").data["state"] == "playing")
        var preloads: [JSONValue] = []
        for _ in 0..<2 { preloads.append(try await player.client.waitForEvent("playback.preload").data) }
        #expect(preloads.map { $0["episodeNo"] } == [2, 3])
        #expect(preloads.allSatisfy { $0["filmId"] == "f1" && $0["playAuthToken"]?.stringValue?.hasPrefix("pat_") == true })
        // The request as BACKEND.md describes it: the viewer's token, the tenant, a snake_case body.
        let request = try await #require(try player.backend.records("play-requests").first)
        #expect(request["userId"] == "alice" && request["tenant"] == "onlivev2" && request["bearer"] == true)
        #expect(request["unionInfo"] == "union-1" && request["drmKek"] == "kek-1" && request["episodeNo"] == 1)
        #expect(request["contentType"] == "application/json" && request["problems"] == [])
        // The last episode has no next.
        try await player.start("f1", 6)
        #expect(try await player.settledState()["state"] == "playing")
        try await player.client.expectNoEvent("playback.preload", withinMs: 500)
    }

    @Test func eachOutcomeHasItsStateAndText() async throws {
        let player = try await Player()
        let expected: [(String, String, String?, Bool?)] = [
            ("f-locked", "paywall", nil, nil),
            ("f-unavailable", "message", "This title is no longer available", false),
            ("f-notready", "message", "Not available yet", false),
            ("f-busy", "message", "Busy, try again in a moment", true),
            ("f-broken", "message", "Couldn't load this episode", true),
            ("no-such-film", "message", "This title is no longer available", false),
        ]
        for (film, state, text, canRetry) in expected {
            try await player.start(film, 1)
            let screen = try await player.settledState()
            #expect(screen["filmId"] == .string(film))
            #expect(screen["state"] == .string(state), "\(film)")
            #expect(screen["text"] == text.map(JSONValue.string), "\(film)")
            #expect(screen["canRetry"] == canRetry.map(JSONValue.bool) ?? nil, "\(film)")
        }
        // An unknown or missing outcome is broken; a reply that does not decode is a network failure.
        for (fault, text) in [("unknownOutcome", "Couldn't load this episode"), ("noOutcome", "Couldn't load this episode"),
                              ("garbage", "Taking longer than usual"), ("badDate", "Taking longer than usual")] {
            try await player.backend.fault(["playReply": .string(fault)])
            try await player.start(fault == "noOutcome" ? "f-busy" : "f1", 1)
            let screen = try await player.settledState()
            #expect(screen["text"] == .string(text), "\(fault)")
            #expect(screen["canRetry"] == true)
        }
    }

    @Test func bothDateFormsDecode() async throws {
        let player = try await Player()
        for form in ["plain", "fractional"] {
            try await player.playbackAdmin(["dateForm": .string(form), "ticketLifetimeSec": 600])
            _ = try await player.client.call("playback.stop")
            try await player.start("f2", 1)
            let play = try await player.client.waitForEvent("playback.play").data
            let expires = try #require(play["expiresAt"]?.stringValue)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let left = try #require(formatter.date(from: expires)).timeIntervalSinceNow
            #expect(left > 590 && left < 601, "\(form): \(expires)")
            if form == "plain" { #expect(expires.hasSuffix(".000Z")) }
            // The prefetched ticket (same form) decoded too: episode 2 starts at once.
            _ = try await player.client.waitForEvent("playback.preload")
            #expect(try await player.start("f2", 2)["state"] == "playing")
        }
    }

    @Test func aPrefetchedTicketStartsBeforeTheReplyAndTheRequestIsStillCounted() async throws {
        let player = try await Player()
        try await player.start("f1", 1)
        _ = try await player.client.waitForEvent("playback.preload") { $0["episodeNo"] == 2 }
        try await player.backend.fault(["playDelayMs": 2000])
        let startedAt = Date()
        let reply = try await player.start("f1", 2)
        #expect(reply["state"] == "playing")
        #expect(Date().timeIntervalSince(startedAt) < 1.5)
        let play = try await player.client.waitForEvent("playback.play").data
        #expect(play["episodeNo"] == 2 && play["vid"] == "f1-e2" && play["startAt"] == 0)
        _ = try await eventually(timeoutMs: 5000, everyMs: 50) { try await player.requests("f1", 2) >= 1 }
        #expect(try await player.requests("f1", 2) == 1)
        // The delayed reply neither plays the episode again nor changes the screen; it prefetches 3 and 4.
        let preload = try await player.client.waitForEvent("playback.preload", timeoutMs: 5000) { $0["episodeNo"] == 4 }
        #expect(preload.data["vid"] == "f1-e4")
        #expect(Date().timeIntervalSince(startedAt) > 1.9)
        try await player.client.expectNoEvent("playback.play", withinMs: 300)
    }

    // MARK: Refresh

    @Test func anExpiredTicketIsRefreshedOnceThenTheRetryMessage() async throws {
        let player = try await Player()
        try await player.start("f1", 1)
        let first = try await player.client.waitForEvent("playback.play").data
        try await player.playbackAdmin(["expireTickets": true])
        let reply = try await player.client.call("playback.error", ["position": 42.5, "message": "ticket expired"])
        #expect(reply["refreshing"] == true)
        let resumed = try await player.client.waitForEvent("playback.play").data
        #expect(resumed["episodeNo"] == 1 && resumed["startAt"] == 42.5)
        #expect(resumed["playAuthToken"] != first["playAuthToken"])
        #expect(try await player.requests("f1", 1) == 2)
        // A second error before the next start: the retry message and no third request.
        let second = try await player.client.call("playback.error", ["position": 50])
        #expect(second["refreshing"] == false)
        let message = try await player.client.waitForEvent("playback.state") { $0["state"] == "message" }.data
        #expect(message["text"] == "Couldn't load this episode" && message["canRetry"] == true)
        try await player.client.expectNoEvent("playback.play", withinMs: 1000)
        #expect(try await player.requests("f1", 1) == 2)
    }

    /// A play request whose connection dies before any reply is a network error, never sent
    /// twice by the daemon: one start is one request, one error one refresh (issue 20, item 1).
    @Test func aPlayRequestWhoseConnectionDiesIsSentOnce() async throws {
        let player = try await Player()
        try await player.start("f1", 1)  // parks a kept-alive connection to the backend
        let play = try await player.client.waitForEvent("playback.play").data
        try await player.backend.fault(["closeWithoutReply": true])

        _ = try await player.client.call("playback.error", ["position": 7])
        let message = try await player.client.waitForEvent("playback.state") { $0["state"] == "message" }.data
        #expect(message["text"] == "Couldn't load this episode")
        #expect(try await player.requests("f1", 1) == 2, "one start and one refresh")

        try await player.start("f2", 1)  // not prefetched: it waits for the reply
        let network = try await player.settledState()
        #expect(network["state"] == "message" && network["text"] == "Taking longer than usual" && network["canRetry"] == true)
        #expect(try await player.requests("f2", 1) == 1)
        #expect(play["episodeNo"] == 1)
    }

    @Test func foregroundRefreshesATicketWithThirtySecondsLeftButNotTenMinutes() async throws {
        let player = try await Player()
        try await player.playbackAdmin(["ticketLifetimeSec": 30])
        try await player.start("f2", 1)
        _ = try await player.client.waitForEvent("playback.play")
        #expect(try await player.client.call("playback.foreground", ["position": 12])["refreshing"] == true)
        let resumed = try await player.client.waitForEvent("playback.play").data
        #expect(resumed["startAt"] == 12)
        #expect(try await player.requests("f2", 1) == 2)

        try await player.playbackAdmin(["ticketLifetimeSec": 600])
        try await player.start("f1", 1)
        _ = try await player.client.waitForEvent("playback.play") { $0["filmId"] == "f1" }
        let untouched = try await player.client.call("playback.foreground", ["position": 12])
        #expect(untouched["refreshing"] == false && untouched["state"] == "playing")
        try await player.client.expectNoEvent("playback.play", withinMs: 500)
        #expect(try await player.requests("f1", 1) == 1)
    }

    // MARK: Prefetched tickets belong to one viewer and device

    @Test func aNewLoginOrNewDeviceValuesDropThePrefetchedTickets() async throws {
        let player = try await Player()
        try await player.start("f1", 1)
        _ = try await player.client.waitForEvent("playback.preload") { $0["episodeNo"] == 3 }
        try await LiveFixture.login(player.client, .bob)
        #expect(try await player.start("f1", 2)["state"] == "loading")
        #expect(try await player.settledState()["state"] == "playing")
        #expect(try await player.backend.records("play-requests", "episodeNo=2").last?["userId"] == "bob")
        _ = try await player.client.waitForEvent("playback.preload") { $0["episodeNo"] == 4 }
        #expect(try await player.start("f1", 3, device: ["unionInfo": "union-2", "drmKek": "kek-2"])["state"] == "loading")
        _ = try await player.settledState()
        // The same device and viewer: the prefetched ticket plays at once.
        #expect(try await player.start("f1", 4, device: ["unionInfo": "union-2", "drmKek": "kek-2"])["state"] == "playing")
        // A logout drops them too, and then nothing is sent.
        _ = try await player.client.call("session.logout")
        #expect(try await player.startError("f1", 5).name == "interactive.NotLoggedIn")
    }

    @Test func stopForgetsTheEpisode() async throws {
        let player = try await Player()
        try await player.start("f1", 1)
        _ = try await player.client.waitForEvent("playback.preload") { $0["episodeNo"] == 3 }
        #expect(try await player.client.call("playback.stop")["stopped"] == true)
        #expect(try await player.client.call("daemon.status")["playback"]?["current"] == .null)
        #expect(try await player.start("f1", 2)["state"] == "loading")
        _ = try await player.settledState()
        // After a stop there is no current episode to refresh.
        _ = try await player.client.call("playback.stop")
        #expect(try await player.client.call("playback.error", ["position": 3])["refreshing"] == false)
        #expect(try await player.settledState()["text"] == "Couldn't load this episode")
    }

    // MARK: Configuration

    @Test func playbackUrlOverridesApiUrl() async throws {
        let player = try await Player { backend in
            ["--api-url", "http://127.0.0.1:9", "--socket-url", backend.baseURL, "--tenant", "onlivev2", "--os", "linuxstb"]
        }
        try await player.start("f1", 1)
        #expect(try await player.settledState()["text"] == "Taking longer than usual")
        #expect(try await player.client.call("config.set", ["playbackUrl": .string(player.backend.baseURL)])["playbackUrl"]
                == .string(player.backend.baseURL))
        try await player.start("f1", 1)
        #expect(try await player.settledState()["state"] == "playing")
    }

    @Test func aShortTimeoutIsTakingLonger() async throws {
        let player = try await Player(config: ["playbackTimeoutMs": 1000])
        try await player.backend.fault(["playDelayMs": 5000])
        let startedAt = Date()
        try await player.start("f1", 1)
        let screen = try await player.settledState(timeoutMs: 5000)
        #expect(screen["text"] == "Taking longer than usual" && screen["canRetry"] == true)
        #expect(Date().timeIntervalSince(startedAt) < 3)
    }

    /// The default timeout, for real: a backend 20 s late gives the message at 15 s.
    @Test func aTwentySecondDelayIsTakingLongerAtFifteenSeconds() async throws {
        let player = try await Player()
        try await player.backend.fault(["playDelayMs": 20_000])
        let startedAt = Date()
        try await player.start("f1", 1)
        let screen = try await player.settledState(timeoutMs: 19_000)
        let elapsed = Date().timeIntervalSince(startedAt)
        #expect(screen["text"] == "Taking longer than usual" && screen["canRetry"] == true)
        #expect(elapsed > 14.5 && elapsed < 18, "after \(elapsed) s")
    }

    // MARK: Secrets

    @Test func noTicketOrTokenInTheLogOrAnObserversEvents() async throws {
        let player = try await Player()
        let asNobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        let observer = try FollowingObserver(prefix: asNobody + [BuiltProducts.ctl, "--socket", player.daemon.socketPath])
        try await player.start("f1", 1)
        _ = try await player.client.waitForEvent("playback.preload") { $0["episodeNo"] == 3 }
        _ = try await player.client.call("playback.error", ["position": 7])
        _ = try await player.client.waitForEvent("playback.play") { $0["startAt"] == 7 }
        var tokens: [String] = []
        let replay = try await player.daemon.client()
        _ = try await replay.call("events.subscribe", ["types": ["playback."], "since": 0])
        while let event = try await replay.nextEvent(timeoutMs: 500) {
            if let token = event.data["playAuthToken"]?.stringValue { tokens.append(token) }
        }
        #expect(tokens.count == 4)  // two plays, two preloads
        #expect(try await observer.waitFor("\"startAt\":7"))
        let live = try await observer.stop()
        let replayed = try await player.daemon.ctl(["--json", "events", "--type", "playback."], prefix: asNobody)
        #expect(replayed.status == 0, "\(replayed.stderr)")
        for output in [live, replayed.stdout] {
            #expect(output.contains("\"playAuthToken\":null"))
            #expect(output.contains("playback.preload"))
            for token in tokens { #expect(!output.contains(token)) }
        }
        let log = player.daemon.stderr
        #expect(log.contains("Requesting play tickets"))
        for secret in tokens + ["token-alice"] { #expect(!log.contains(secret)) }
        // A person's view of the events does not show the ticket either.
        let human = try await player.daemon.ctl(["events", "--type", "playback."])
        #expect(human.stdout.contains("play vid=f1-e1"))
        for token in tokens { #expect(!human.stdout.contains(token)) }
    }
}

/// `interactivectl --json events -f --type playback.` running as another user until stopped.
final class FollowingObserver: @unchecked Sendable {
    private let process = Process()
    private let output = LogCollector()

    init(prefix: [String]) throws {
        process.executableURL = URL(fileURLWithPath: prefix[0])
        process.arguments = Array(prefix.dropFirst()) + ["--json", "events", "-f", "--type", "playback."]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let collector = output
        pipe.fileHandleForReading.readabilityHandler = { collector.append($0.availableData) }
        try process.run()
    }

    /// Waits (up to 3 s) until the output contains `text`.
    func waitFor(_ text: String) async throws -> Bool {
        try await eventually(timeoutMs: 3000) { output.text.contains(text) }
    }

    /// Stops it (SIGKILL: a child started from a test thread may have SIGTERM blocked); what it printed.
    func stop() async throws -> String {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            guard try await process.exited(withinMs: 10_000) else { throw TestFailure("the observer outlived SIGKILL") }
        }
        return output.text
    }

    deinit {
        // No wait (a deinit cannot suspend): Foundation reaps the child.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
