#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds of `CLOCK_BOOTTIME` (the clock `ContinuousClock` reads on Linux, so a deadline
/// keeps counting while the box is suspended), the unit of the timer heap: read once per turn of
/// the loop, so it is a plain `clock_gettime` (no `Duration` arithmetic).
struct LoopTime {
    var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// `instant` (a `ContinuousClock` instant, as the loop's API takes them) in loop time.
    func nanoseconds(at instant: ContinuousClock.Instant) -> UInt64 {
        let current = now
        let delay = ContinuousClock.now.duration(to: instant)
        guard delay > .zero else { return current }
        let (sum, overflow) = current.addingReportingOverflow(LoopTime.nanoseconds(delay))
        return overflow ? UInt64.max / 2 : min(sum, UInt64.max / 2)
    }

    /// `duration` in whole nanoseconds, saturating (a duration of centuries is "never").
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return UInt64.max / 2 }
        return min(whole, UInt64.max / 2) + UInt64(attoseconds / 1_000_000_000)
    }
}
