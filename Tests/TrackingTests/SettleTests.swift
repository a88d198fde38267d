@testable import InteractiveDaemon
import Testing

/// How long a status read waits for tracking: until tracking reached the point, or the limit.
@Suite(.timeLimit(.minutes(1))) struct SettleTests {
    @Test func aWaiterResumedBeforeItWaitsReturnsAtOnce() async {
        let waiter = SettleWaiter()
        waiter.resume()
        waiter.resume()
        await waiter.wait()
    }

    @Test func aWaiterWaitsForItsResume() async {
        let waiter = SettleWaiter()
        async let waited: Void = waiter.wait()
        waiter.resume()
        await waited
    }

    /// Tracking's feed is never handled here (the service does not run): the bounded wait ends
    /// at its limit; unbounded, it would not end and the suite's time limit would fail the test.
    @Test func aBoundedSettleEndsAtItsLimitWhenTrackingDoesNotAnswer() async throws {
        let harness = try TrackingHarness()
        let service = TrackingService(store: harness.store, bus: harness.bus, log: harness.log, deviceId: "device-1",
                                      context: ClientContextBase(sdkVersion: "9.9.9", os: "Debian GNU/Linux 12"))
        service.feed.record(.shown(trackingId: "t1"))
        let started = ContinuousClock.now
        await service.feed.settled(within: .milliseconds(30))
        #expect(started.duration(to: .now) >= .milliseconds(30))
    }
}
