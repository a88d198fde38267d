/// Background work an actor starts from its isolated code, run as child tasks of the actor's
/// `run()`: the work's lifetime is the service's, and stopping the service (cancelling `run()`)
/// cancels it and waits for it. Work started before `run()` begins waits for it; work started
/// after `run()` ended is dropped.
struct ChildTasks: Sendable {
    typealias Work = @Sendable () async -> Void

    private let work: AsyncStream<Work>
    private let continuation: AsyncStream<Work>.Continuation
    private let executor: (any TaskExecutor)?

    /// `executor`: where the loop that starts the pieces, and the pieces' own (nonisolated) steps,
    /// run. The managers pass the event loop's, so that starting a piece (an expiry or render
    /// timer: a few per overlay) and its sleep never wake a thread of the cooperative pool (at
    /// 500 overlays/s that was ~10,000 context switches a second there).
    init(preferring executor: (any TaskExecutor)? = nil) {
        (work, continuation) = AsyncStream.makeStream(of: Work.self)
        self.executor = executor
    }

    /// Starts `work` as a child task of `run()`.
    func start(_ work: @escaping Work) {
        continuation.yield(work)
    }

    /// Runs the work started, each piece in a child task, until the calling task is cancelled;
    /// then cancels what still runs and returns once it ended. Called once, by the owner's `run()`.
    func run() async {
        guard let executor else { return await runPieces() }
        await withTaskExecutorPreference(executor) { await runPieces() }
    }

    private func runPieces() async {
        await withDiscardingTaskGroup { group in
            // Iterating an AsyncStream ends when the iterating task is cancelled.
            for await piece in work {
                group.addTask { await piece() }
            }
            group.cancelAll()
        }
        continuation.finish()
    }
}
