#if canImport(Glibc)
import Glibc
#endif

/// Wall-clock and monotonic time helpers in milliseconds.
public enum Timestamp {
    /// Milliseconds since the Unix epoch.
    public static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Milliseconds on a clock that only goes forward and counts time suspended (for timeouts
    /// and durations): `CLOCK_BOOTTIME`, the clock `ContinuousClock` and `Task.sleep` use, so a
    /// deadline and the sleep that checks it agree, also across a standby.
    public static func monotonicMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T13:53:52.123Z`, for times from
    /// 1970 to 9999 (years outside are written with their last four digits). The date comes
    /// from the day count by arithmetic (the proleptic Gregorian calendar, as `gmtime_r`), not
    /// from `gmtime_r`: the daemon writes a few of these per overlay.
    public static func rfc3339(_ ms: Int64) -> String {
        let msPerDay: Int64 = 86_400_000
        let days = ms >= 0 ? ms / msPerDay : (ms - msPerDay + 1) / msPerDay
        let msOfDay = Int(ms - days * msPerDay)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return String(unsafeUninitializedCapacity: 24) { text in
            (text[4], text[7], text[10], text[13], text[16], text[19], text[23]) =
                (UInt8(ascii: "-"), UInt8(ascii: "-"), UInt8(ascii: "T"), UInt8(ascii: ":"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "Z"))
            putDigits(Int(year), at: 0, width: 4, in: text)
            putDigits(month, at: 5, width: 2, in: text)
            putDigits(day, at: 8, width: 2, in: text)
            putDigits(msOfDay / 3_600_000, at: 11, width: 2, in: text)
            putDigits(msOfDay / 60_000 % 60, at: 14, width: 2, in: text)
            putDigits(msOfDay / 1000 % 60, at: 17, width: 2, in: text)
            putDigits(msOfDay % 1000, at: 20, width: 3, in: text)
            return 24
        }
    }

    /// The year, month (1–12) and day (1–31) of a day counted from 1970-01-01 (H. Hinnant's
    /// `civil_from_days`: eras of 400 years, years starting in March).
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)
        let month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Writes `value` as `width` decimal digits (zero-padded, its last `width` digits) at `offset`.
    private static func putDigits(_ value: Int, at offset: Int, width: Int, in text: UnsafeMutableBufferPointer<UInt8>) {
        var rest = value.magnitude
        for index in stride(from: offset + width - 1, through: offset, by: -1) {
            text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }
}
