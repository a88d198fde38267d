import Testing
import InteractiveClient

@Suite struct ReconnectPolicyTests {
    @Test func delaysDoubleUpToTheCap() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(100), maxDelay: .milliseconds(700))
        let delays = (1...6).map { policy.delay(afterFailures: $0) }
        #expect(delays == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(700),
                           .milliseconds(700), .milliseconds(700)])
    }

    @Test func aHugeFailureCountStaysAtTheCap() {
        let policy = ReconnectPolicy()
        #expect(policy.delay(afterFailures: Int.max) == .seconds(2))
    }

    @Test func attemptsCanBeLimited() {
        let policy = ReconnectPolicy(maxAttempts: 3)
        #expect(policy.delay(afterFailures: 2) != nil)
        #expect(policy.delay(afterFailures: 3) == nil)
    }
}
