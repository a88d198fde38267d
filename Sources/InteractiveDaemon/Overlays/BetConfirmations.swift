/// How a bet confirmation (`answer.confirm`) ended.
enum BetDecision: Sendable, Equatable {
    case accepted
    case declined
    /// Nobody replied before the deadline: the bet is declined.
    case timedOut
    /// The overlay left the screen first.
    case overlayGone
}

/// Bet confirmations asked of the viewer, by overlay id, each settled once: by the viewer's
/// reply, by the overlay leaving the screen, or by its deadline.
///
/// The answer flow asks (`ask`) before it tells the players and only then waits (`wait`), so a
/// reply that arrives in between is kept, not refused. Times are milliseconds since the epoch;
/// the owner passes the current time in.
struct BetConfirmations<Waiter> {
    enum Reply {
        /// Nothing is being asked for this overlay.
        case notPending
        /// The flow is waiting: resume it with the decision.
        case resume(Waiter)
        /// The flow has not started waiting yet: its `wait` returns the decision.
        case kept
    }

    private enum State {
        case asked(deadline: Int64)
        case waiting(Waiter, deadline: Int64)
        /// Settled before the flow waited.
        case settled(BetDecision)
    }

    private var pending: [String: State] = [:]

    /// Starts a confirmation for `overlayId`, due at `deadline`. An earlier one still waiting for
    /// the same overlay is returned, to be resumed as declined.
    mutating func ask(_ overlayId: String, deadline: Int64) -> Waiter? {
        var replaced: Waiter?
        if case .waiting(let waiter, _)? = pending[overlayId] { replaced = waiter }
        pending[overlayId] = .asked(deadline: deadline)
        return replaced
    }

    /// The viewer's reply.
    mutating func reply(_ overlayId: String, accept: Bool) -> Reply {
        settle(overlayId, accept ? .accepted : .declined, onlyIfAsked: true)
    }

    /// The overlay left the screen: a confirmation asked for it ends.
    mutating func overlayGone(_ overlayId: String) -> Reply {
        settle(overlayId, .overlayGone, onlyIfAsked: false)
    }

    private mutating func settle(_ overlayId: String, _ decision: BetDecision, onlyIfAsked: Bool) -> Reply {
        switch pending[overlayId] {
        case .asked?:
            pending[overlayId] = .settled(decision)
            return .kept
        case .waiting(let waiter, _)?:
            pending[overlayId] = nil
            return .resume(waiter)
        case .settled?:
            if !onlyIfAsked { pending[overlayId] = .settled(decision) }
            return .notPending
        case nil:
            return .notPending
        }
    }

    /// The flow waits: returns the decision at once when it is already known, nil when `waiter`
    /// now waits for it.
    mutating func wait(_ overlayId: String, _ waiter: Waiter) -> BetDecision? {
        switch pending[overlayId] {
        case .asked(let deadline)?:
            pending[overlayId] = .waiting(waiter, deadline: deadline)
            return nil
        case .settled(let decision)?:
            pending[overlayId] = nil
            return decision
        case .waiting?, nil:
            return .overlayGone
        }
    }

    /// Confirmations whose deadline is at or before `now` time out. Returns the waiters to resume
    /// with `.timedOut` (one not waiting yet gets it from `wait`), by overlay id.
    mutating func expire(now: Int64) -> [(overlayId: String, waiter: Waiter)] {
        var expired: [(overlayId: String, waiter: Waiter)] = []
        for (overlayId, state) in pending {
            switch state {
            case .asked(let deadline) where deadline <= now:
                pending[overlayId] = .settled(.timedOut)
            case .waiting(let waiter, let deadline) where deadline <= now:
                pending[overlayId] = nil
                expired.append((overlayId, waiter))
            default:
                continue
            }
        }
        return expired.sorted { $0.overlayId < $1.overlayId }
    }

    /// True while a confirmation for `overlayId` waits for the viewer.
    func awaitsReply(_ overlayId: String) -> Bool {
        switch pending[overlayId] {
        case .asked?, .waiting?: return true
        case .settled?, nil: return false
        }
    }
}
