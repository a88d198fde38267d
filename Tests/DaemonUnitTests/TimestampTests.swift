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
}
