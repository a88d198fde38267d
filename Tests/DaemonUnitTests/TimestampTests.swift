import Glibc
import Testing
@testable import InteractiveDaemon

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (Int64(1_764_400_000_123), "2025-11-29T07:06:40.123Z"),
        (Int64(1_795_960_632_093), "2026-11-29T13:57:12.093Z"), (Int64(253_402_300_799_999), "9999-12-31T23:59:59.999Z"),
    ])
    func rfc3339(_ ms: Int64, _ text: String) {
        #expect(Timestamp.rfc3339(ms) == text)
    }

    /// Every day from 1970 to 2100 and around the year 9999, against glibc's gmtime_r.
    @Test func theDateIsGmtimesForEveryDay() {
        for days in Array(Int64(0)...Int64(47_847)) + Array(Int64(2_932_000)...Int64(2_932_896)) {
            var seconds = time_t(days * 86_400)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let date = Timestamp.civilDate(daysSinceEpoch: days)
            guard date.year == Int64(parts.tm_year) + 1900, date.month == Int(parts.tm_mon) + 1, date.day == Int(parts.tm_mday) else {
                Issue.record("day \(days): \(date), gmtime_r says \(parts.tm_year + 1900)-\(parts.tm_mon + 1)-\(parts.tm_mday)")
                return
            }
        }
        #expect(Timestamp.rfc3339(-1) == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(951_782_400_000) == "2000-02-29T00:00:00.000Z")
    }
}
