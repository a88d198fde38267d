/// How often a room may be joined again after its media failed (the media process died, or the
/// server hung up its PeerConnection): at most `limit` times within `window`, then the room
/// goes `error` instead of looping. Pure: the caller passes the time.
struct VoiceRestartBudget: Sendable, Equatable {
    static let limit = 3
    static let window: Duration = .seconds(60)

    /// When the restarts within the window were made.
    private(set) var restarts: [ContinuousClock.Instant] = []

    /// A failure at `now`: true when the room may be joined again (and counts it), false when
    /// `limit` restarts were already made within the window.
    mutating func allowsRestart(at now: ContinuousClock.Instant) -> Bool {
        restarts.removeAll { now - $0 >= Self.window }
        guard restarts.count < Self.limit else { return false }
        restarts.append(now)
        return true
    }
}
