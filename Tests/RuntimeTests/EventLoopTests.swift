import Runtime
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A value several closures on the loop share.
private final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { state.withLock { body(&$0) } }
}

/// An actor pinned to the loop, as the media process's is.
private actor PinnedCounter {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }
    private(set) var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
    func runsOnLoop() -> Bool { EventLoop.shared.inLoop }
}

@Suite struct EventLoopTests {
    let loop = EventLoop.shared

    @Test func runsBlocksInSubmissionOrderOnItsThread() async {
        let order = Shared<[Int]>([])
        let onLoop = Shared(true)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for value in 0..<100 {
                loop.execute { [loop] in
                    onLoop.withLock { $0 = $0 && loop.inLoop }
                    order.withLock { $0.append(value) }
                    if value == 99 { done.resume() }
                }
            }
        }
        #expect(order.withLock { $0 } == Array(0..<100))
        #expect(onLoop.withLock { $0 })
        #expect(!loop.inLoop)
    }

    @Test func pinnedActorsRunOnTheLoopAndIOHandlersCanAssumeTheirIsolation() async {
        let counter = PinnedCounter()
        #expect(await counter.runsOnLoop())
        let isolated = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            loop.execute {
                counter.assumeIsolated { $0.append(7) }
                done.resume(returning: true)
            }
        }
        #expect(isolated)
        #expect(await counter.values == [7])
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async {
        let fired = Shared<[Int]>([])
        let elapsed = await withCheckedContinuation { (done: CheckedContinuation<Duration, Never>) in
            // Scheduled and cancelled from one block on the loop: no timer can run in between,
            // and every deadline is still ahead (one already past means "at once", in the order
            // scheduled).
            loop.execute { [loop] in
                let start = ContinuousClock.now.advanced(by: .milliseconds(1))
                let cancelled = loop.schedule(at: start.advanced(by: .milliseconds(5))) { fired.withLock { $0.append(-1) } }
                loop.schedule(at: start.advanced(by: .milliseconds(20))) {
                    fired.withLock { $0.append(2) }
                    done.resume(returning: ContinuousClock.now - start)
                }
                loop.schedule(at: start.advanced(by: .milliseconds(10))) { fired.withLock { $0.append(1) } }
                loop.schedule(at: start) { fired.withLock { $0.append(0) } }
                loop.cancel(cancelled)
            }
        }
        #expect(fired.withLock { $0 } == [0, 1, 2])
        #expect(elapsed >= .milliseconds(20))
    }

    @Test func aTimerCancelledByAnEarlierTimerOfTheSameTurnDoesNotRun() async {
        let fired = Shared(false)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            loop.execute { [loop] in
                // Both are due when the turn reads the clock (the same deadline, already past);
                // the first scheduled runs first and cancels the second, which was due too.
                let due = ContinuousClock.now
                let canceller = Shared<TimerID?>(nil)
                loop.schedule(at: due) { if let timer = canceller.withLock({ $0 }) { loop.cancel(timer) } }
                let timer = loop.schedule(at: due) { fired.withLock { $0 = true } }
                canceller.withLock { $0 = timer }
                loop.schedule(at: due.advanced(by: .milliseconds(20))) { done.resume() }
            }
        }
        #expect(!fired.withLock { $0 })
    }

    @Test func reportsReadinessOfARegisteredDescriptor() async throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        defer { close(fds[1]) }
        let reader = fds[0]
        let received = await withCheckedContinuation { (done: CheckedContinuation<[UInt8], Never>) in
            let once = Shared(false)
            loop.execute { [loop] in
                do {
                    try loop.register(reader) { events in
                        guard events.contains(.readable) else { return }
                        var buffer = [UInt8](repeating: 0, count: 16)
                        let count = read(reader, &buffer, buffer.count)
                        guard count > 0, !once.withLock({ $0 }) else { return }
                        once.withLock { $0 = true }
                        loop.deregister(reader)
                        close(reader)
                        done.resume(returning: Array(buffer.prefix(count)))
                    }
                } catch {
                    done.resume(returning: [])
                }
            }
            var bytes: [UInt8] = [104, 105]
            _ = write(fds[1], &bytes, 2)
        }
        #expect(received == [104, 105])
    }

    @Test func sleepEndsEarlyWhenItsTaskIsCancelled() async {
        // Uncancelled, the sleep would end normally after 30 s and the expectation would fail.
        let task = Task { try await loop.sleep(for: .seconds(30)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func withTimeoutCancelsAnOperationThatOverruns() async throws {
        let sawCancellation = Shared(false)
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(10), "waiting for nothing") {
                do {
                    try await EventLoop.shared.sleep(for: .seconds(30))
                } catch {
                    sawCancellation.withLock { $0 = true }
                    throw error
                }
            }
        }
        #expect(sawCancellation.withLock { $0 })
        #expect(try await withTimeout(.seconds(30), "adding") { 2 + 2 } == 4)
    }
}
