/// Keeps the effects of an actor's successive decisions performed in the order they were
/// decided, although performing them suspends (an actor is reentrant: a second decision may be
/// made while the first one's effects are still being published). Each batch takes a turn when
/// it is decided, with no suspension in between, and waits for the batches before it.
/// The effects must not wait for a later decision of the same actor.
struct EffectTurns {
    private var nextTurn = 0
    private var serving = 0
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]

    /// A turn for a batch decided now.
    mutating func take() -> Int {
        defer { nextTurn &+= 1 }
        return nextTurn
    }

    /// Whether `turn` must wait for earlier batches.
    func mustWait(_ turn: Int) -> Bool { turn != serving }

    /// `turn` waits: resumed by the `finish` of the batch before it, or at once when that
    /// `finish` came first (the waiting task may have been suspended between `mustWait` and this
    /// call: an executor switch on the way into `withCheckedContinuation`).
    mutating func wait(_ turn: Int, _ waiter: CheckedContinuation<Void, Never>) {
        if turn == serving {
            waiter.resume()
        } else {
            waiters[turn] = waiter
        }
    }

    /// The batch being served was performed: returns the waiter of the next one to resume, if it waits.
    mutating func finish() -> CheckedContinuation<Void, Never>? {
        serving &+= 1
        return waiters.removeValue(forKey: serving)
    }
}
