import Runtime
import Testing

@Suite struct EarliestDeadlineTests {
    @Test func theEarlierOfTwoAndNilOnlyWhenBothAre() {
        let start = ContinuousClock.Instant.now
        let later = start + .seconds(1)
        #expect(Optional(start).earliest(later) == start)
        #expect(Optional(later).earliest(start) == start)
        #expect(Optional(later).earliest(nil) == later)
        #expect(ContinuousClock.Instant?.none.earliest(later) == later)
        #expect(ContinuousClock.Instant?.none.earliest(nil) == nil)
    }
}
