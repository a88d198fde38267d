import Glibc

/// An event's RFC 3339 UTC time (`2026-11-29T14:03:19.696Z`) as people read it: the local time
/// of day with its offset from UTC (`15:03:19.696+01:00`).
enum EventTime {
    static func local(_ rfc3339: String) -> String {
        guard let (seconds, millis) = parse(rfc3339) else { return rfc3339 }
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return rfc3339 }
        let offset = parts.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 60
        let minutes = abs(offset) % 60
        return "\(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))):\(two(Int(parts.tm_sec))).\(three(millis))"
            + "\(sign)\(two(hours)):\(two(minutes))"
    }

    /// Seconds since the epoch and milliseconds of `YYYY-MM-DDTHH:MM:SS[.fff]Z`; nil for anything else.
    static func parse(_ text: String) -> (Int, Int)? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[10] == UInt8(ascii: "T") else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for byte in bytes[from..<from + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var millis = 0
        if bytes.count > 20 {
            // Milliseconds from the first three digits of the fraction.
            let fraction = bytes[20..<bytes.count - 1]
            guard bytes[19] == UInt8(ascii: "."), !fraction.isEmpty, fraction.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            for index in 0..<3 {
                let digit = index < fraction.count ? Int(fraction[fraction.startIndex + index] - 48) : 0
                millis = millis * 10 + digit
            }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return (Int(timegm(&parts)), millis)
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    private static func three(_ value: Int) -> String { value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)" }
}
