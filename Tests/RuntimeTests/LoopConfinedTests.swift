import Runtime
import Testing

/// Mutable state that is not `Sendable`, as a connection's core is.
private final class Tally {
    var count = 0
}

/// Runs `body` on the shared loop and returns what it returns.
private func onLoop<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { done in
        EventLoop.shared.execute { done.resume(returning: body()) }
    }
}

@Suite struct LoopConfinedTests {
    @Test func closuresOnTheLoopReadAndChangeTheValue() async {
        let (tally, numbers) = await onLoop { () -> (LoopConfined<Tally>, LoopConfined<[Int]>) in
            (LoopConfined(Tally(), loop: .shared), LoopConfined([], loop: .shared))
        }
        for value in 0..<3 {
            EventLoop.shared.execute {
                tally.value.count += 1
                numbers.value.append(value)
            }
        }
        let seen = await onLoop { (tally.value.count, numbers.value) }
        #expect(seen.0 == 3)
        #expect(seen.1 == [0, 1, 2])
    }

    @Test func touchingTheValueOffTheLoopStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let box = await onLoop { LoopConfined(Tally(), loop: .shared) }
            box.value.count += 1
        }
    }

    @Test func makingABoxOffTheLoopStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            _ = LoopConfined(Tally(), loop: .shared)
        }
    }
}
