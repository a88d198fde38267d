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

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T13:53:52.123Z`.
    public static func rfc3339(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text: [UInt8] = Array("0000-00-00T00:00:00.000Z".utf8)
        putDigits(Int(parts.tm_year) + 1900, at: 0, width: 4, in: &text)
        putDigits(Int(parts.tm_mon) + 1, at: 5, width: 2, in: &text)
        putDigits(Int(parts.tm_mday), at: 8, width: 2, in: &text)
        putDigits(Int(parts.tm_hour), at: 11, width: 2, in: &text)
        putDigits(Int(parts.tm_min), at: 14, width: 2, in: &text)
        putDigits(Int(parts.tm_sec), at: 17, width: 2, in: &text)
        putDigits(Int(ms % 1000), at: 20, width: 3, in: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Writes `value` as `width` decimal digits (zero-padded) at `offset`.
    private static func putDigits(_ value: Int, at offset: Int, width: Int, in text: inout [UInt8]) {
        var rest = abs(value)
        for index in stride(from: offset + width - 1, through: offset, by: -1) {
            text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }
}
