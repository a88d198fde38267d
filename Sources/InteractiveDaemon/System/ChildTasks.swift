import Runtime

/// Background work a part of the daemon starts from its code on the loop (a REST call, a store
/// read), run as child tasks of the part's `run()`: the work's lifetime is the service's, and
/// stopping the service (cancelling `run()`) cancels it and waits for it. Work started before
/// `run()` begins waits for it; work started after `run()` ended is dropped.
///
/// Each piece is isolated to the loop actor and starts there directly (a task group's child
/// takes its operation's isolation), so starting one never wakes a thread of Swift's pool.
@LoopActor
final class ChildTasks {
    typealias Work = @LoopActor () async -> Void

    private var pending: [Work] = []
    private var waiter: CheckedContinuation<Void, Never>?
    private var ended = false

    /// Starts `work` as a child task of `run()`.
    func start(_ work: @escaping Work) {
        guard !ended else { return }
        pending.append(work)
        wake()
    }

    /// Runs the work started, each piece in a child task, until the calling task is cancelled;
    /// then cancels what still runs and returns once it ended. Called once, by the owner's `run()`.
    func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                while !pending.isEmpty { group.addTask(operation: pending.removeFirst()) }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        if pending.isEmpty && !Task.isCancelled { waiter = continuation } else { continuation.resume() }
                    }
                } onCancel: {
                    EventLoop.shared.execute { [weak self] in self?.wake() }
                }
            }
            group.cancelAll()
        }
        ended = true
        pending = []
    }

    private func wake() {
        let waiting = waiter
        waiter = nil
        waiting?.resume()
    }
}
