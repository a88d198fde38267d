import Runtime
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite(.timeLimit(.minutes(1))) struct BlockingCallTests {
    @Test func returnsTheResultOrTheError() async throws {
        #expect(try await BlockingCall.run { 6 * 7 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await BlockingCall.run { throw Refused() } }
    }

    /// A call blocked for 30 s: cancelling its caller ends the wait at once (the suite's time
    /// limit would fail the test otherwise); the worker finishes it later, its result dropped.
    /// The caller is cancelled once the call runs (before, `run` would not start it at all).
    @Test func cancellationEndsTheWaitAtOnce() async {
        let release = Mutex(false)
        let (started, signal) = AsyncStream.makeStream(of: Void.self)
        let call = Task {
            try await BlockingCall.run { () -> Int in
                signal.yield()
                for _ in 0..<3000 where !release.withLock({ $0 }) { usleep(10_000) }
                return 1
            }
        }
        for await _ in started { break }
        call.cancel()
        await #expect(throws: CancellationError.self) { _ = try await call.value }
        release.withLock { $0 = true }
    }
}
