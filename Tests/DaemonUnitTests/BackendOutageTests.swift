import Testing
@testable import InteractiveDaemon

@Suite struct BackendOutageTests {
    private let start = ContinuousClock.now

    @Test func oneWarningPerOutageAndTheDurationWhenItEnds() {
        var outage = BackendOutage()
        #expect(outage.lost(at: start) == .outageBegins)
        #expect(outage.attemptFailed(at: start + .seconds(1)) == .stillOut(failures: 1))
        #expect(outage.attemptFailed(at: start + .seconds(3)) == .stillOut(failures: 2))
        #expect(outage.lost(at: start + .seconds(4)) == .stillOut(failures: 2))
        let ended = outage.connected(at: start + .milliseconds(12_345))
        #expect(ended?.duration == .milliseconds(12_345))
        #expect(ended?.failures == 2)
        // The next loss is a new outage.
        #expect(outage.lost(at: start + .seconds(20)) == .outageBegins)
    }

    @Test func aBackendNeverReachedIsAnOutageFromTheFirstFailedAttempt() {
        var outage = BackendOutage()
        #expect(outage.attemptFailed(at: start) == .outageBegins)
        #expect(outage.attemptFailed(at: start + .seconds(1)) == .stillOut(failures: 2))
        #expect(outage.connected(at: start + .seconds(2))?.failures == 2)
    }

    @Test func aConnectionWithoutAnOutageEndsNone() {
        var outage = BackendOutage()
        #expect(outage.connected(at: start) == nil)
        #expect(outage.lost(at: start) == .outageBegins)
        outage.reset()
        #expect(outage.connected(at: start + .seconds(1)) == nil)
    }

    @Test func durationsReadForPeople() {
        #expect(BackendOutage.seconds(.milliseconds(12_345)) == "12.3 s")
        #expect(BackendOutage.seconds(.milliseconds(80)) == "0.0 s")
        #expect(BackendOutage.milliseconds(.seconds(-3)) == 0)
        #expect(BackendOutage.milliseconds(.seconds(Int64.max)) == Int64.max)
    }
}
