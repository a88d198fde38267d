import IPCProtocol
import JSONValue
import Testing
import InteractiveClient

/// The client's voice calls against `ScriptedVoiceDaemon`, a scripted server that speaks
/// docs/ipc.md's voice exchanges (a daemon with a voice manager and a voice server is not
/// needed to check what the client sends and how it reads the answers).
@Suite struct VoiceCallsTests {
    static let joined: JSONValue = [
        "room": "watch-party", "state": "joined", "selfId": "4711", "muted": false, "error": nil,
        "participants": [["peerId": "4711", "display": "Alice", "muted": false, "talking": false],
                         ["peerId": "88", "display": "Bob", "muted": true, "talking": false]],
    ]

    @Test func joinSendsTheContractsParamsAndReadsTheRoom() async throws {
        let daemon = try ScriptedVoiceDaemon(replies: ["voice.join": .result(Self.joined)])
        defer { daemon.stop() }
        let client = try await InteractiveClient.connect(path: daemon.path)
        let room = try await client.voiceJoin(room: "watch-party", muted: true, pin: "1234", timeoutMs: 5000)
        #expect(room.state == .joined && room.selfId == "4711")
        #expect(room.participants.map(\.display) == ["Alice", "Bob"])
        let sent = daemon.requests.last
        #expect(sent?.method == "voice.join")
        #expect(sent?.params == ["room": "watch-party", "muted": true, "pin": "1234", "timeoutMs": 5000])
        _ = try await client.voiceJoin(room: "watch-party")
        #expect(daemon.requests.last?.params == ["room": "watch-party", "muted": false])
        await client.close()
    }

    @Test func refusalsCarryTheirNames() async throws {
        let daemon = try ScriptedVoiceDaemon(replies: [
            "voice.join": .daemonError(name: "interactive.BackendRefused", message: "wrong pin"),
            "voice.mute": .daemonError(name: "interactive.VoiceUnavailable", message: "no microphone",
                                       data: ["reason": "autoaudiosrc: no device"]),
        ])
        defer { daemon.stop() }
        let client = try await InteractiveClient.connect(path: daemon.path)
        do {
            _ = try await client.voiceJoin(room: "r", pin: "0000")
            Issue.record("voice.join with a wrong pin did not throw")
        } catch IPCClientError.rpc(let error) {
            #expect(error.code == -32000 && error.name == "interactive.BackendRefused")
        }
        do {
            try await client.voiceMute(true)
            Issue.record("voice.mute without a microphone did not throw")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.VoiceUnavailable" && error.data?["reason"] == "autoaudiosrc: no device")
        }
        await client.close()
    }

    @Test func statusMuteLeaveAndTheEventsOfARoom() async throws {
        let daemon = try ScriptedVoiceDaemon(replies: [
            "voice.mute": .result(["room": "watch-party", "muted": true]),
            "voice.leave": .result(["room": "watch-party", "state": "left"]),
        ])
        defer { daemon.stop() }
        let client = try await InteractiveClient.connect(path: daemon.path)
        #expect(try await client.voiceStatus() == nil)
        daemon.setVoice(Self.joined)
        let status = try #require(try await client.voiceStatus())
        var room = VoiceRoom(status)
        room.apply(try await client.voiceMute(true))
        #expect(daemon.requests.last?.params == ["muted": true])
        #expect(room.status.participants.first?.muted == true)

        var events = client.events(types: ["voice."]).makeAsyncIterator()
        guard case .subscribed(let subscription)? = try await events.next() else {
            Issue.record("no subscription first")
            return
        }
        #expect(subscription.status?.voice?.participants.count == 2)
        daemon.emit(EventType.voicePeer, VoicePeerEvent(room: "watch-party", peerId: "93", display: "Carol", event: .joined,
                                                        muted: false).data)
        daemon.emit(EventType.voiceTalking, VoiceTalkingEvent(room: "watch-party", peerId: "93", talking: true).data)
        for _ in 0 ..< 2 {
            guard case .event(let envelope)? = try await events.next() else { continue }
            room.apply(envelope)
        }
        #expect(room.othersTalking.map(\.display) == ["Carol"])
        #expect(try await client.voiceLeave().state == .left)
        await client.close()
    }
}
