import IPCProtocol
import JSONValue

/// Typed calls of the voice room (docs/ipc.md, Voice rooms). `VoiceRoom` keeps what they return
/// up to date with the `voice.*` events.
extension InteractiveClient {
    /// `voice.join`: joins `room` (leaving another one), muted or not, with the room's `pin` (a
    /// secret: the daemon never logs it) and the `display` name the others see (nil: the
    /// viewer's). Returns the room once joined (`selfId`, `participants`), or `connecting` after
    /// `timeoutMs` while the daemon keeps trying. Refusals are `IPCClientError.rpc` named
    /// `interactive.BackendRefused` (a wrong pin, a full room), `BackendUnreachable`,
    /// `VoiceUnavailable` (`data.reason`), `NotConfigured` (no `voiceUrl`) or `NoRoom`.
    public func voiceJoin(room: String, display: String? = nil, muted: Bool = false, pin: String? = nil,
                          timeoutMs: Int? = nil) async throws -> VoiceStatus
    {
        try await call(VoiceJoinParams(room: room, display: display, muted: muted, pin: pin, timeoutMs: timeoutMs))
    }

    /// `voice.leave`: the room left (`state` `left`).
    @discardableResult
    public func voiceLeave() async throws -> VoiceLeaveResult {
        try await call(VoiceLeaveParams())
    }

    /// `voice.mute`: muted, the others see it and nothing leaves the box; the mute in force.
    @discardableResult
    public func voiceMute(_ muted: Bool) async throws -> VoiceMuteResult {
        try await call(VoiceMuteParams(muted: muted))
    }

    /// `daemon.status`'s `voice`: the room with every participant, nil when there is none.
    public func voiceStatus() async throws -> VoiceStatus? {
        try await call(DaemonStatusParams()).voice
    }
}
