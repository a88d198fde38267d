import IPCProtocol
import JSONValue
import Testing
import InteractiveClient

/// `VoiceRoom`: a snapshot's `voice` kept up to date by the `voice.*` events.
@Suite struct VoiceRoomTests {
    static let joined = VoiceStatus(room: "watch-party", state: .joined, selfId: "4711", muted: false, participants: [
        VoiceParticipant(peerId: "4711", display: "Alice", muted: false, talking: false),
        VoiceParticipant(peerId: "88", display: "Bob", muted: true, talking: false),
    ])

    private func event<Data: EventData>(_ data: Data) -> EventEnvelope {
        EventEnvelope(bootId: "b1", seq: 1, type: Data.type, time: "", data: data.data)
    }

    private func summary(_ room: VoiceRoom) -> [String] {
        room.status.participants.map { "\($0.display ?? "?")\($0.muted ? " muted" : "")\($0.talking ? " talking" : "")" }
    }

    @Test func peersJoinChangeAndLeave() {
        var room = VoiceRoom(Self.joined)
        var changed: Bool
        changed = room.apply(event(VoicePeerEvent(room: "watch-party", peerId: "93", display: "Carol", event: .joined, muted: false)))
        #expect(changed)
        changed = room.apply(event(VoicePeerEvent(room: "watch-party", peerId: "88", display: "Bob", event: .updated, muted: false)))
        #expect(changed)
        #expect(summary(room) == ["Alice", "Bob", "Carol"])
        changed = room.apply(event(VoicePeerEvent(room: "watch-party", peerId: "93", display: "Carol", event: .left, muted: false,
                                                reason: .timeout)))
        #expect(changed)
        #expect(summary(room) == ["Alice", "Bob"])
        changed = room.apply(event(VoicePeerEvent(room: "other", peerId: "5", display: "Eve", event: .joined, muted: false)))
        #expect(!changed)
    }

    @Test func talkingMarksParticipantsAndOnlyOthersDuck() {
        var room = VoiceRoom(Self.joined)
        var changed: Bool
        changed = room.apply(event(VoiceTalkingEvent(room: "watch-party", peerId: "4711", talking: true)))
        #expect(changed)
        #expect(summary(room) == ["Alice talking", "Bob muted"])
        #expect(room.othersTalking.isEmpty)
        room.apply(event(VoiceTalkingEvent(room: "watch-party", peerId: "88", talking: true)))
        #expect(room.othersTalking.map(\.peerId) == ["88"])
        room.apply(event(VoiceTalkingEvent(room: "watch-party", peerId: "88", talking: false)))
        #expect(room.othersTalking.isEmpty)
        changed = room.apply(event(VoiceTalkingEvent(room: "watch-party", peerId: "nobody", talking: true)))
        #expect(!changed)
    }

    @Test func muteResultAndStateMarkThisBox() {
        var room = VoiceRoom(Self.joined)
        room.apply(VoiceMuteResult(room: "watch-party", muted: true))
        #expect(room.status.muted && summary(room) == ["Alice muted", "Bob muted"])
        room.apply(event(VoiceStateEvent(room: "watch-party", state: .joined, selfId: "4711", muted: false, participants: 2)))
        #expect(!room.status.muted && summary(room) == ["Alice", "Bob muted"])
        #expect(!room.needsStatus)
    }

    @Test func aCountThatDiffersAsksForTheListAndLeavingEmptiesIt() {
        var room = VoiceRoom(Self.joined)
        room.apply(event(VoiceStateEvent(room: "watch-party", state: .joined, selfId: "4711", muted: false, participants: 3)))
        #expect(room.needsStatus)
        room.apply(event(VoiceStateEvent(room: "watch-party", state: .left, selfId: "4711", muted: false, participants: 0,
                                         reason: .kicked)))
        #expect(room.status.state == .left && room.reason == .kicked && room.status.participants.isEmpty && !room.needsStatus)
        room.apply(event(VoiceStateEvent(room: "another", state: .joined, selfId: "12", muted: true, participants: 1)))
        #expect(room.status.room == "another" && room.needsStatus)
    }
}
