/// Nanoseconds on the loop's clock (`ContinuousClock`, measured from the loop's start), the unit
/// of the timer heap.
struct LoopTime {
    let origin = ContinuousClock.now

    func nanoseconds(at instant: ContinuousClock.Instant) -> UInt64 {
        let elapsed = origin.duration(to: instant)
        guard elapsed > .zero else { return 0 }
        return LoopTime.nanoseconds(elapsed)
    }

    var now: UInt64 { nanoseconds(at: .now) }

    /// `duration` in whole nanoseconds, saturating (a duration of centuries is "never").
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return UInt64.max / 2 }
        return min(whole, UInt64.max / 2) + UInt64(attoseconds / 1_000_000_000)
    }
}
