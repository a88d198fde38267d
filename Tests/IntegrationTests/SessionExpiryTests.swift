import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Session expiry (issue 21, item 6) and what observers see of the session (issue 20, item 8),
/// against the real daemon and the reference backend. The backend refuses a token it does not
/// know: 401 on every REST call, CONNECT_ERROR on the live connection.
@Suite struct SessionExpiryTests {
    static let asNobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
    static let events = ["overlay.", "answer.", "login.", "session.", "room.", "playback."]

    /// The events `client` receives until one of `type` matching `predicate` (included), bounded.
    static func events(_ client: DaemonConnection, until type: String, where predicate: (JSONValue) -> Bool = { _ in true })
        async throws -> [EventEnvelope] {
        var seen: [EventEnvelope] = []
        while let event = try await client.nextEvent(timeoutMs: 10_000) {
            seen.append(event)
            if event.type == type && predicate(event.data) { return seen }
        }
        throw TestFailure("no \(type) within 10 s; saw \(seen.map(\.type))")
    }

    /// The expiry was said once in `events` (`session.state` expired, `login.required` expired),
    /// and the status says it.
    static func expectExpiry(in events: [EventEnvelope], _ client: DaemonConnection) async throws {
        let states = events.filter { $0.type == "session.state" }
        #expect(states.map { $0.data["expired"] } == [true])
        #expect(states.first?.data["loggedIn"] == true)
        #expect(events.filter { $0.type == "login.required" }.map(\.data) == [["reason": "expired"]])
        #expect(try await client.call("daemon.status")["session"]?["expired"] == true)
    }

    /// Waits for the expiry's two events (when nothing else is awaited meanwhile).
    static func expectExpiry(_ client: DaemonConnection) async throws {
        try await expectExpiry(in: try await events(client, until: "login.required"), client)
    }

    @Test func anUnauthorizedAnswerExpiresTheSessionOnceAndALoginClearsIt() async throws {
        let live = try await LiveFixture(viewer: .alice, events: Self.events)
        try await live.backend.fault(["actionsReply": "unauthorized"])
        let overlayId = try await live.show(live.backend.quiz("tl-expiry")).overlayId
        let report: JSONValue = ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]]
        try await live.bridge(overlayId, report)
        let events = try await Self.events(live.player, until: "answer.result")
        #expect(events.last?.data["reason"] == "api_unauthorized")
        try await Self.expectExpiry(in: events, live.player)

        // Once per expiry: another refusal says nothing more.
        try await live.bridge(overlayId, report)
        let again = try await Self.events(live.player, until: "answer.result")
        #expect(again.last?.data["reason"] == "api_unauthorized")
        #expect(!again.contains { $0.type == "login.required" || $0.type == "session.state" })

        try await live.backend.fault(["actionsReply": nil])
        try await LiveFixture.login(live.player, .alice)
        let cleared = try await live.player.waitForEvent("session.state")
        #expect(cleared.data["expired"] == false && cleared.data["userId"] == "alice")
        #expect(try await live.status()["session"]?["expired"] == false)
        #expect(try await live.answer(overlayId)["status"] == "success")
    }

    @Test func aRefusedInteractiveStatusExpiresTheSession() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        try await LiveFixture.login(client, .alice)
        try await client.subscribe(Self.events)
        try await backend.fault(["restFail": 401])  // REST only: the live connection is accepted
        #expect(try await client.call("room.join", ["mediaId": "m1"])["state"] == "joined")
        try await Self.expectExpiry(client)
    }

    @Test func aRefusedVIPStatusExpiresTheSession() async throws {
        let live = try await LiveFixture(viewer: .alice, events: Self.events)
        let overlayId = try await live.show(live.backend.quiz("tl-vip-expiry", extra: ["requireVip": true])).overlayId
        try await live.backend.fault(["restFail": 403])
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
        let events = try await Self.events(live.player, until: "answer.result")
        #expect(events.last?.data["status"] == "failure")
        try await Self.expectExpiry(in: events, live.player)
    }

    @Test func aRefusedScenarioExpiresTheSession() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        _ = try await client.call("session.login", ["token": "token-unknown", "userId": "zed"])
        try await client.subscribe(Self.events)
        do {
            _ = try await client.call("room.join", ["mediaId": "demo", "mode": "vod"])
            Issue.record("the VOD join succeeded with a refused token")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.BackendRefused")
        }
        try await Self.expectExpiry(client)
    }

    @Test func aRefusedConnectExpiresTheSession() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        _ = try await client.call("session.login", ["token": "token-unknown", "userId": "zed"])
        try await client.subscribe(Self.events)
        _ = try? await client.call("room.join", ["mediaId": "m1", "timeoutMs": 5000])  // BackendRefused
        let room = try await client.waitForEvent("room.state") { $0["state"] == "error" }
        #expect(room.data["error"]?["name"] == "interactive.BackendRefused")
        try await Self.expectExpiry(client)
    }

    @Test func aRefusedPlayRequestSaysSoWithoutRetryAndExpiresTheSession() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        _ = try await client.call("session.login", ["token": "token-unknown", "userId": "zed"])
        try await client.subscribe(Self.events)
        _ = try await client.call("playback.start", ["filmId": "f1", "episodeNo": 1, "device": PlaybackTests.device])
        let events = try await Self.events(client, until: "playback.state") { $0["state"] != "loading" }
        let state = try #require(events.last?.data)
        #expect(state["state"] == "message")
        #expect(state["canRetry"] == false)
        #expect(state["code"] == "expired")
        try await Self.expectExpiry(in: events, client)
    }

    /// Issue 20, item 8: observers read the viewer's userId and displayName.
    @Test func observersSeeWhetherSomeoneIsLoggedInButNotWho() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        try await LiveFixture.login(client, .alice)
        #expect(try await client.call("daemon.status")["session"]?["userId"] == "alice")

        let status = try await daemon.ctl(["--json", "status"], prefix: Self.asNobody)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try JSONValue.parse(status.stdout)["session"] == ["loggedIn": true, "expired": false])
        let events = try await daemon.ctl(["--json", "events", "--type", "session."], prefix: Self.asNobody)
        #expect(events.status == 0, "\(events.stderr)")
        #expect(events.stdout.contains("session.state"))
        for secret in ["alice", "Alice"] { #expect(!events.stdout.contains(secret), "an observer's events name the viewer") }
        #expect(!status.stdout.contains("alice"))
    }
}
