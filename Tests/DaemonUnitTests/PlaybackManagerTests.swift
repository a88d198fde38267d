import Runtime
import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// The playback shell with a stand-in ticket service: what it publishes, to whom, and what it asks for.
@Suite(.timeLimit(.minutes(1))) @LoopActor struct PlaybackManagerTests {
    /// Answers every play request with a ticket for its episode and the next one, and records the requests.
    actor StandInService: PlayTicketService {
        private(set) var requests: [(PlayRequest, PlaybackEndpoint)] = []

        nonisolated func fetchTickets(_ request: PlayRequest, from endpoint: PlaybackEndpoint) async -> PlayFetchResult {
            await record(request, endpoint)
            let episode = request.episode.episodeNo
            let expires = Timestamp.nowMs() + 600_000
            return .reply(.tickets(
                current: PlayTicket(vid: "v-\(episode)", playAuthToken: "secret-\(episode)", expiresAtMs: expires),
                next: [NextTicket(episodeNo: episode + 1,
                                  ticket: PlayTicket(vid: "v-\(episode + 1)", playAuthToken: "secret-\(episode + 1)", expiresAtMs: expires))]))
        }

        private func record(_ request: PlayRequest, _ endpoint: PlaybackEndpoint) { requests.append((request, endpoint)) }
    }

    static var settings: Settings {
        Settings(["tenant": "t1", "apiUrl": "http://127.0.0.1:9/", "playbackTimeoutMs": 2500])
    }

    /// The next `count` events a queue received, as (type, data).
    static func events(_ queue: OutboundQueue, _ count: Int) async throws -> [(String, JSONValue)] {
        var events: [(String, JSONValue)] = []
        while events.count < count, let items = await queue.next() {
            for case .line(let line) in items {
                let message = try JSONValue.parse(line)
                if let type = message["params"]?["type"]?.stringValue, let data = message["params"]?["data"] {
                    events.append((type, data))
                }
            }
        }
        return events
    }

    @Test func controlSubscribersGetTheTicketAndObserversNull() async throws {
        let bus = EventBus(bootId: "test")
        let control = OutboundQueue(eventLimit: 64)
        let observer = OutboundQueue(eventLimit: 64)
        bus.subscribe(connection: 1, queue: control, prefixes: ["playback."], role: .control, since: nil, sinceBootId: nil) { _ in [] }
        bus.subscribe(connection: 2, queue: observer, prefixes: ["playback."], role: .observer, since: nil, sinceBootId: nil) { _ in [] }
        _ = await control.next()
        _ = await observer.next()
        let service = StandInService()
        let manager = PlaybackManager(bus: bus, log: Logger(target: .stderr, minimumPriority: .error), service: service,
                                            settings: { Self.settings })
        manager.sessionChanged(ViewerSession(token: "session-token", userId: "alice", displayName: nil))
        let reply = try manager.start(filmId: "f1", episodeNo: 1, unionInfo: "u", drmKek: "k")
        #expect(reply["state"] == "loading")

        let seen = try await Self.events(control, 4)
        try #require(seen.map(\.0) == ["playback.state", "playback.play", "playback.state", "playback.preload"])
        #expect(seen[1].1["playAuthToken"] == "secret-1" && seen[3].1["playAuthToken"] == "secret-2")
        let observed = try await Self.events(observer, 4)
        try #require(observed.map(\.0) == seen.map(\.0))
        #expect(observed[1].1["playAuthToken"] == .null && observed[3].1["playAuthToken"] == .null)
        #expect(observed[1].1["vid"] == "v-1")

        // Replays keep the redaction.
        let late = OutboundQueue(eventLimit: 64)
        bus.subscribe(connection: 3, queue: late, prefixes: ["playback."], role: .observer, since: 0, sinceBootId: nil) { _ in Array("{}".utf8) }
        let replayed = try await Self.events(late, 4)
        try #require(replayed.count == 4)
        #expect(replayed[1].1["playAuthToken"] == .null)

        // The request: the viewer's token, the tenant, the origin without its slash, the timeout.
        let requests = await service.requests
        #expect(requests.count == 1)
        #expect(requests.first?.1 == PlaybackEndpoint(settings: Self.settings, token: "session-token"))
        #expect(requests.first?.1.origin == "http://127.0.0.1:9" && requests.first?.1.timeoutMs == 2500)
        // The status board never holds a ticket's token.
        #expect(!(bus.snapshot()).jsonText.contains("secret-"))
    }

    @Test func withoutConfigurationNothingIsAsked() async throws {
        let service = StandInService()
        let manager = PlaybackManager(bus: EventBus(bootId: "test"), log: Logger(target: .stderr, minimumPriority: .error),
                                            service: service, settings: { Settings([:]) })
        manager.sessionChanged(ViewerSession(token: "session-token", userId: "alice", displayName: nil))
        #expect(throws: RPCError.self) {
            try manager.start(filmId: "f1", episodeNo: 1, unionInfo: "u", drmKek: "k")
        }
        #expect(await service.requests.isEmpty)
    }

    /// Never answers: each request waits until its task is cancelled, and records that.
    actor HangingService: PlayTicketService {
        private(set) var started: [Int] = []
        private(set) var cancelled: [Int] = []
        private var waiting: [Int: CheckedContinuation<Void, Never>] = [:]

        nonisolated func fetchTickets(_ request: PlayRequest, from endpoint: PlaybackEndpoint) async -> PlayFetchResult {
            await withTaskCancellationHandler {
                await wait(request.episode.episodeNo)
            } onCancel: {
                Task { await self.cancel(request.episode.episodeNo) }
            }
            return .networkFailure
        }

        private func wait(_ episode: Int) async {
            started.append(episode)
            await withCheckedContinuation { waiting[episode] = $0 }
        }

        private func cancel(_ episode: Int) {
            cancelled.append(episode)
            waiting.removeValue(forKey: episode)?.resume()
        }

        /// Waits (bounded by the suite's time limit) until these requests started and were cancelled.
        func waitUntil(started: [Int], cancelled: [Int]) async {
            while self.started != started || self.cancelled != cancelled { await Task.yield() }
        }
    }

    @Test func aSupersededPlayRequestIsCancelled() async throws {
        let service = HangingService()
        let manager = PlaybackManager(bus: EventBus(bootId: "test"), log: Logger(target: .stderr, minimumPriority: .error),
                                            service: service, settings: { Self.settings })
        manager.sessionChanged(ViewerSession(token: "session-token", userId: "alice", displayName: nil))
        _ = try manager.start(filmId: "f1", episodeNo: 1, unionInfo: "u", drmKek: "k")
        await service.waitUntil(started: [1], cancelled: [])
        _ = try manager.start(filmId: "f1", episodeNo: 2, unionInfo: "u", drmKek: "k")
        await service.waitUntil(started: [1, 2], cancelled: [1])
        _ = try manager.stop()
        await service.waitUntil(started: [1, 2], cancelled: [1, 2])
    }
}
