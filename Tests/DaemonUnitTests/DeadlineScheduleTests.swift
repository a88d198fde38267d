import Testing
@testable import InteractiveDaemon

@Suite struct DeadlineScheduleTests {
    private let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    @Test func onlyAnEarlierDeadlineAsksForANewTimer() {
        var schedule = DeadlineSchedule<String>()
        #expect(schedule.set("a", at: at(20)) == at(20))
        let first = schedule.armed(at: at(20))
        #expect(schedule.isCurrent(first))
        #expect(schedule.set("b", at: at(25)) == nil)
        #expect(schedule.set("c", at: at(20)) == nil)
        #expect(schedule.set("d", at: at(10)) == at(10))
        let second = schedule.armed(at: at(10))
        // The replaced timer still wakes at 20 s: it must do nothing.
        #expect(!schedule.isCurrent(first))
        #expect(schedule.isCurrent(second))
    }

    @Test func aTimerThatFiredIsNoLongerCurrent() {
        var schedule = DeadlineSchedule<String>()
        _ = schedule.set("a", at: at(5))
        let timer = schedule.armed(at: at(5))
        _ = schedule.takeDue(now: at(5))
        #expect(!schedule.isCurrent(timer))
    }

    @Test func dueKeysComeOutEarliestFirstAndTheNextDeadlineFollows() {
        var schedule = DeadlineSchedule<String>()
        for (key, second) in [("late", 30), ("first", 10), ("second", 12), ("gone", 11)] {
            _ = schedule.set(key, at: at(second))
        }
        schedule.remove("gone")
        #expect(!schedule.contains("gone") && schedule.contains("late"))
        let (due, next) = schedule.takeDue(now: at(12))
        #expect(due == ["first", "second"])
        #expect(!schedule.contains("first"))
        #expect(next == at(30))
        // The fired timer is no longer armed: any new deadline asks for one.
        #expect(schedule.set("new", at: at(40)) == at(40))
        let (rest, none) = schedule.takeDue(now: at(100))
        #expect(rest == ["late", "new"])
        #expect(none == nil)
    }

    @Test func removingTheEarliestKeepsTheTimerWhichThenFindsNothingDue() {
        var schedule = DeadlineSchedule<String>()
        _ = schedule.set("a", at: at(5))
        _ = schedule.armed(at: at(5))
        _ = schedule.set("b", at: at(9))
        schedule.remove("a")
        let (due, next) = schedule.takeDue(now: at(5))
        #expect(due.isEmpty)
        #expect(next == at(9))
    }
}
