import IPCProtocol

/// The voice room a player draws: `daemon.status`'s `voice` (or `voice.join`'s result), then kept
/// up to date by `apply(_:)` with each `voice.state`, `voice.peer` and `voice.talking`.
///
/// A `voice.state` carries only the number of participants: when it does not match the list
/// (another client joined a room, a reconnection re-read it), `needsStatus` is set and the list
/// is to be read again (`InteractiveClient.voiceStatus()`).
public struct VoiceRoom: Sendable, Equatable {
    /// The room as last read or changed: `participants` lists this box (`selfId`) first when
    /// the daemon does.
    public private(set) var status: VoiceStatus
    /// Why the box is out (`left`, `kicked`, `replaced` with `left`; `destroyed` with `closed`).
    public private(set) var reason: VoiceStateReason?
    /// A `voice.state` said a number of participants the list does not have.
    public private(set) var needsStatus = false

    public init(_ status: VoiceStatus) {
        self.status = status
    }

    /// The participants other than this box who talk now: what lowers the programme's volume.
    public var othersTalking: [VoiceParticipant] {
        status.participants.filter { $0.talking && $0.peerId != status.selfId }
    }

    /// Applies a `voice.*` event; returns whether the room changed. Other events, and events of
    /// another room (but a `voice.state`, which names the room now), change nothing.
    @discardableResult
    public mutating func apply(_ event: EventEnvelope) -> Bool {
        let before = self
        if let state = event.decode(VoiceStateEvent.self) {
            apply(state)
        } else if let peer = event.decode(VoicePeerEvent.self), peer.room == status.room {
            apply(peer)
        } else if let talking = event.decode(VoiceTalkingEvent.self), talking.room == status.room {
            update(talking.peerId) { $0.talking = talking.talking }
        }
        return self != before
    }

    /// `voice.mute`'s result: this box's mute in force.
    public mutating func apply(_ mute: VoiceMuteResult) {
        guard mute.room == status.room else { return }
        status.muted = mute.muted
        if let selfId = status.selfId { update(selfId) { $0.muted = mute.muted } }
    }

    private mutating func apply(_ event: VoiceStateEvent) {
        if event.room != status.room { status.participants = [] }
        status.room = event.room
        status.state = event.state
        status.selfId = event.selfId ?? status.selfId
        status.muted = event.muted
        status.error = event.error
        reason = event.reason
        if event.state.isActive {
            if let selfId = status.selfId { update(selfId) { $0.muted = event.muted } }
            needsStatus = event.participants != status.participants.count
        } else {
            status.participants = []
            needsStatus = false
        }
    }

    private mutating func apply(_ event: VoicePeerEvent) {
        switch event.event {
        case .left:
            status.participants.removeAll { $0.peerId == event.peerId }
        case .joined, .updated:
            if status.participants.contains(where: { $0.peerId == event.peerId }) {
                update(event.peerId) { participant in
                    participant.display = event.display ?? participant.display
                    participant.muted = event.muted
                }
            } else {
                status.participants.append(VoiceParticipant(peerId: event.peerId, display: event.display,
                                                            muted: event.muted, talking: false))
            }
        }
    }

    private mutating func update(_ peerId: String, _ change: (inout VoiceParticipant) -> Void) {
        guard let index = status.participants.firstIndex(where: { $0.peerId == peerId }) else { return }
        change(&status.participants[index])
    }
}
