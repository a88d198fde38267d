/// Parses the ISO 8601 internet date-times a play reply's `expiresAt` holds
/// (`2026-11-30T10:00:00Z`, `2026-11-30T10:00:00.123Z`, `2026-11-30T17:00:00+07:00`): what the
/// seed's decoder accepts, with or without fractional seconds. Anything else is nil, and so is an
/// instant outside 1970-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z: RFC 3339 writes no other
/// year in four digits (year 9999 with a negative offset reached players as year 0), and no
/// ticket expires there.
enum InternetDateTime {
    /// The last instant a four-digit year can write, in milliseconds since the epoch.
    static let latestMs: Int64 = 253_402_300_799_999

    /// Milliseconds since the Unix epoch (fractions beyond milliseconds are dropped).
    static func milliseconds(from text: String) -> Int64? {
        var reader = DigitReader(Array(text.utf8))
        guard let year = reader.digits(4), reader.skip("-"), let month = reader.digits(2), reader.skip("-"),
              let day = reader.digits(2), reader.skip("T"), let hour = reader.digits(2), reader.skip(":"),
              let minute = reader.digits(2), reader.skip(":"), let second = reader.digits(2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
              second < 60 else { return nil }
        var millis = 0
        if reader.skip(".") {
            guard let fraction = reader.fraction() else { return nil }
            millis = fraction
        }
        guard let offsetMinutes = reader.zone(), reader.atEnd else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes) * 60
        let milliseconds = seconds * 1000 + Int64(millis)
        return (0...latestMs).contains(milliseconds) ? milliseconds : nil
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date (proleptic Gregorian; H. Hinnant's days_from_civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Reads the fixed-width parts of a date-time, byte by byte.
    private struct DigitReader {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                index += 1
            }
            return value
        }

        /// One or more digits after the decimal point, as milliseconds.
        mutating func fraction() -> Int? {
            var millis = 0
            var count = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if count < 3 { millis = millis * 10 + Int(bytes[index] - 0x30) }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 3) { millis *= 10 }
            return millis
        }

        /// `Z` (0) or `±HH:MM`, as minutes east of UTC.
        mutating func zone() -> Int? {
            if skip("Z") { return 0 }
            let sign: Int
            if skip("+") {
                sign = 1
            } else if skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(2), skip(":"), let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
            return sign * (hours * 60 + minutes)
        }
    }
}
