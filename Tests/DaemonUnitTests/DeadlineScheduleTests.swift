import Testing
@testable import InteractiveDaemon

@Suite struct DeadlineScheduleTests {
    private let start = ContinuousClock.now

    private func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    /// A timer that never fires by itself (the test plays the clock).
    private func idleTimer() -> Task<Void, Never> { Task { try? await Task.sleep(for: .seconds(3600)) } }

    @Test func onlyAnEarlierDeadlineAsksForANewTimer() {
        var schedule = DeadlineSchedule<String>()
        #expect(schedule.set("a", at: at(20)) == at(20))
        let first = idleTimer()
        schedule.armed(first, at: at(20))
        #expect(schedule.set("b", at: at(25)) == nil)
        #expect(schedule.set("c", at: at(20)) == nil)
        #expect(schedule.set("d", at: at(10)) == at(10))
        schedule.armed(idleTimer(), at: at(10))
        #expect(first.isCancelled)
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
}
