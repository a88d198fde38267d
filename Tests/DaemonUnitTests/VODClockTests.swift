import Testing
@testable import InteractiveDaemon

@Suite struct VODClockTests {
    @Test(arguments: [
        ("5", 5.0), ("01:30", 90.0), ("1:02:03", 3723.0), ("00:10.5", 10.5), ("0", 0.0), (" 7 ", 7.0),
    ])
    func parsesEveryFormat(_ text: String, _ seconds: Double) {
        #expect(VODClock.parseTime(text) == seconds)
    }

    @Test(arguments: ["", "xx", "1:99", "1:2:3:4", "-5", "1:xx", "01:", ":30", "1.5:00"])
    func rejectsMalformedTimes(_ text: String) {
        #expect(VODClock.parseTime(text) == nil)
    }

    @Test func firesEachTimelineOnceInItsInterval() {
        var clock = VODClock(times: [10, 0, 5, 5])
        #expect(clock.report(0.25) == [1])
        #expect(clock.report(4.9) == [])
        #expect(clock.report(5.0) == [2, 3])
        #expect(clock.report(9.99) == [])
        #expect(clock.report(10.01) == [0])
        #expect(clock.report(10.5) == [])
    }

    @Test func firstReportAfterFiveSecondsIsASeek() {
        var clock = VODClock(times: [0, 6])
        #expect(clock.report(5.5) == [])
        #expect(clock.report(6.5) == [1])
    }

    @Test func seeksFireNothingAndLandingOnATimeDoesNotFireIt() {
        var clock = VODClock(times: [3, 20, 21])
        #expect(clock.report(1) == [])
        #expect(clock.report(20) == [])
        #expect(clock.report(21) == [2])
        #expect(clock.report(2) == [])
        #expect(clock.report(4) == [0])
        #expect(clock.report(1) == [])
        #expect(clock.report(4) == [])
    }
}
