import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Play-ticket values (issue 20, item 4) through the reference backend's playback faults: what
/// a player would get whole is refused or cut, `next` is bounded, foreground refreshes limited.
@Suite struct PlayTicketValuesTests {
    typealias Player = PlaybackTests.Player

    /// A 4 MiB `vid`, control characters in `vid` and `playAuthToken`, a `current` ticket expired
    /// already and an `expiresAt` past year 9999 in UTC played at once: each is now a reply that
    /// does not decode ("Taking longer than usual", retry), and nothing is played.
    @Test(arguments: ["longVid", "controlChars", "expired", "farFuture"])
    func aHostileCurrentTicketIsNotPlayed(_ mode: String) async throws {
        let player = try await Player()
        try await player.backend.fault(["playReply": .string(mode)])
        try await player.start("f1", 1)
        let state = try await player.settledState()
        #expect(state["state"] == "message" && state["text"] == "Taking longer than usual" && state["canRetry"] == true, "\(mode): \(state)")
        try await player.client.expectNoEvent("playback.play", withinMs: 300)
        let status = try await player.client.call("daemon.status")["playback"]
        #expect(status?["current"] == .null)
        #expect(status?["prefetched"] == [], "a reply that does not decode prefetches nothing either")
        #expect(try await player.client.call("daemon.status").jsonText.utf8.count < 64 * 1024)
    }

    /// A `javascript:` subtitle URL reached players: the entry is dropped, the ticket plays.
    @Test func onlyLoadableSubtitlesReachThePlayer() async throws {
        let player = try await Player()
        try await player.backend.fault(["playReply": "scriptSubtitles"])
        try await player.start("f1", 1)
        let play = try await player.client.waitForEvent("playback.play").data
        #expect(play["vid"] == "f1-e1")
        #expect(play["subtitles"] == [])
    }

    /// 20,000 `next` entries left 21,003 prefetched tickets: a reply that large is over the
    /// 256 KiB bound; one of 30 entries prefetches the first 10.
    @Test func nextIsBounded() async throws {
        let player = try await Player()
        try await player.backend.fault(["playNextCount": 20_000])
        try await player.start("f1", 1)
        #expect(try await player.settledState()["text"] == "Taking longer than usual")
        try await player.backend.fault(["playNextCount": 30])
        try await player.start("f1", 1)
        #expect(try await player.settledState()["state"] == "playing")
        var preloads: [JSONValue?] = []
        for _ in 0..<10 { preloads.append(try await player.client.waitForEvent("playback.preload").data["episodeNo"]) }
        #expect(preloads == (2...11).map { .number(Double($0)) })
        try await player.client.expectNoEvent("playback.preload", withinMs: 300)
        #expect(try await player.client.call("daemon.status")["playback"]?["prefetched"]?.arrayValue?.count == 10)
    }

    /// With tickets that never last a minute, every `playback.foreground` was a play request:
    /// at most one per 30 s now.
    @Test func foregroundRefreshesAreLimited() async throws {
        let player = try await Player()
        try await player.playbackAdmin(["ticketLifetimeSec": 30])
        try await player.start("f1", 1)
        #expect(try await player.settledState()["state"] == "playing")
        var refreshing: [JSONValue?] = []
        for position in [5, 6, 7] {
            refreshing.append(try await player.client.call("playback.foreground", ["position": .number(Double(position))])["refreshing"])
            if refreshing.last == true { try await player.client.waitForEvent("playback.play") { $0["startAt"] == .number(Double(position)) } }
        }
        #expect(refreshing == [true, false, false])
        #expect(try await player.requests("f1", 1) == 2)
    }
}
