import IPCProtocol
import JSONValue
import Testing
import VoiceMediaProtocol
@testable import InteractiveDaemon

/// The media process's life as the voice core sees it: started again (and the room joined again)
/// when it dies, at most three times a minute; `unavailable` is `interactive.VoiceUnavailable`.
@Suite struct VoiceCoreMediaTests {
    /// The media process of a joined room dies; the room is joined again on a fresh handle.
    static func die(_ voice: inout VoiceHarness, status: Int32 = 1) throws {
        voice.input(.mediaExited(try #require(voice.mediaId), .exited(status: status)))
    }

    /// After `die`: back in the room with a new media process.
    static func rejoin(_ voice: inout VoiceHarness, handle: UInt64, selfId: UInt64) {
        voice.attach(handle)
        voice.mediaReady()
        voice.enterRoom(selfId: selfId, others: [VoiceHarness.peer(601, "Minh"), VoiceHarness.peer(602, "Thu", muted: true)],
                        handle: handle)
        voice.negotiate(handle: handle)
    }

    @Test func aMediaProcessThatDiesIsStartedAgainAndTheRoomRejoined() throws {
        var voice = VoiceHarness.joined()
        let dead = try #require(voice.mediaId)
        try Self.die(&voice)
        #expect(voice.sentLast.map(\.kind) == [
            .detach(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId), .attach(session: VoiceHarness.sessionId),
        ])
        let next = try #require(voice.mediaId)
        #expect(next != dead)
        #expect(!voice.last.contains(.stopMedia(dead)))
        #expect(voice.states.map(\.state) == [.reconnecting])
        #expect(voice.logs.last == .mediaFailed(what: "the media process ended (exit status 1)", restart: 1))

        Self.rejoin(&voice, handle: 8_000_000_000_001, selfId: 502)
        #expect(voice.core.status?.state == .joined)
        #expect(voice.core.status?.selfId == "502")
        #expect(voice.allStates.last == VoiceStateEvent(room: "movie-night", state: .joined, selfId: "502", muted: false, participants: 3))
        // The same participants: nothing to tell.
        #expect(!voice.all.contains { if case .peer = $0 { return true } else { return false } })
        #expect(voice.mediaCommands.first == .start(MediaStart(source: "autoaudiosrc", sink: "autoaudiosink", echoCancel: true,
                                                               ice: [], muted: false)))
    }

    @Test func theFourthDeathWithinAMinuteIsAnError() throws {
        var voice = VoiceHarness.joined()
        for restart in 1...3 {
            voice.advance(by: .seconds(10))
            try Self.die(&voice)
            #expect(voice.core.status?.state == .reconnecting)
            Self.rejoin(&voice, handle: UInt64(8_000_000_000_000 + restart), selfId: UInt64(510 + restart))
        }
        voice.advance(by: .seconds(10))
        try Self.die(&voice)
        let state = try #require(voice.states.last)
        #expect(state.state == .error)
        #expect(state.error?.name == "interactive.VoiceUnavailable")
        #expect(voice.logs.last.map { if case .mediaGaveUp = $0 { return true } else { return false } } == true)
        // Given up: no new process, the server left.
        #expect(!voice.last.contains { if case .startMedia = $0 { return true } else { return false } })
        #expect(voice.last.contains { if case .closeSocket = $0 { return true } else { return false } })
    }

    @Test func deathsMoreThanAMinuteApartAreAllRestarted() throws {
        var voice = VoiceHarness.joined()
        for restart in 1...5 {
            voice.advance(by: .seconds(21))
            try Self.die(&voice)
            #expect(voice.core.status?.state == .reconnecting, "restart \(restart)")
            Self.rejoin(&voice, handle: UInt64(8_000_000_000_000 + restart), selfId: UInt64(510 + restart))
        }
    }

    @Test func theServerHangingUpTheMediaJoinsAgainAndCounts() throws {
        var voice = VoiceHarness.joined()
        let media = try #require(voice.mediaId)
        voice.server(["janus": "hangup", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId)), "reason": "ICE failed"])
        #expect(voice.last.contains(.stopMedia(media)))
        #expect(voice.sentLast.map(\.kind) == [
            .detach(session: VoiceHarness.sessionId, handle: VoiceHarness.handleId), .attach(session: VoiceHarness.sessionId),
        ])
        #expect(voice.core.restarts.restarts.count == 1)
        // What the stopped process and the detached handle still report changes nothing.
        voice.input(.mediaExited(media, .signalled(15)))
        voice.server(["janus": "hangup", "session_id": .number(Double(VoiceHarness.sessionId)),
                      "sender": .number(Double(VoiceHarness.handleId)), "reason": "Close PC"])
        #expect(voice.core.restarts.restarts.count == 1)
    }

    @Test func unavailableMediaIsVoiceUnavailableAndNothingOfTheRoomIsSent() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.connect()
        let media = try #require(voice.mediaId)
        voice.input(.mediaStarted(media))
        voice.input(.media(media, .unavailable(reason: "source pipeline refused: no element \"pulsesrc\"")))
        let error = try #require(voice.error(of: request))
        #expect(error.name == "interactive.VoiceUnavailable")
        #expect(error.data?["reason"] == "source pipeline refused: no element \"pulsesrc\"")
        #expect(voice.lastMessage("exists") == nil && voice.lastMessage("join") == nil)
        #expect(voice.states.map(\.state) == [.error])
        // The session made meanwhile is destroyed; the process's exit (69) is no restart.
        #expect(voice.sentLast.map(\.kind) == [.destroy(session: VoiceHarness.sessionId)])
        voice.input(.mediaExited(media, .exited(status: 69)))
        #expect(voice.last.isEmpty)
    }

    @Test func aMediaProcessThatCannotStartIsVoiceUnavailable() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.input(.mediaExited(try #require(voice.mediaId), .notStarted(reason: "No such file or directory")))
        #expect(voice.error(of: request)?.name == "interactive.VoiceUnavailable")
        #expect(voice.error(of: request)?.data?["reason"] == "cannot start interactived-voice: No such file or directory")
    }

    @Test func aMediaErrorIsLoggedAndItsExitRestartsIt() throws {
        var voice = VoiceHarness.joined()
        voice.mediaSays(.error(message: "ICE failed for good"))
        #expect(voice.logs.last == .mediaError("ICE failed for good"))
        #expect(voice.core.status?.state == .joined)
        try Self.die(&voice)
        #expect(voice.core.status?.state == .reconnecting)
    }

    @Test func aDyingMediaProcessBeforeTheFirstJoinIsRestartedToo() throws {
        var voice = VoiceHarness()
        let request = voice.join()
        voice.connect()
        try Self.die(&voice, status: 134)
        #expect(voice.core.status?.state == .connecting)
        // Nothing of the room went on the handle yet: it is kept.
        #expect(voice.sentLast.isEmpty)
        voice.mediaReady()
        voice.enterRoom()
        #expect(try voice.reply(to: request)?.get()["state"] == "joined")
    }
}
