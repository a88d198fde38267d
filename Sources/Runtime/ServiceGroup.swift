/// A long-running part of the daemon (the local API server, the room, tracking, …).
public protocol Service: Sendable {
    /// Runs until `shutdown` is triggered (or the task is cancelled), then finishes what it must
    /// (flushes, says goodbye) and returns. Every task it starts is a child of this call.
    func run(until shutdown: ShutdownSignal) async throws
}

/// Runs services as children of one task group and stops them in reverse order
/// (swift-service-lifecycle's `ServiceGroup` is the model).
///
/// Services start in the order given. When the group's shutdown signal fires, or any service
/// returns or throws on its own, each service still running is asked to finish, the last one
/// first, and awaited; whatever is still running when the grace period has passed is cancelled.
public struct ServiceGroup: Sendable {
    /// A service and the name logs and reports use for it.
    public struct Entry: Sendable {
        public let name: String
        public let service: any Service

        public init(_ name: String, _ service: any Service) {
            self.name = name
            self.service = service
        }
    }

    /// How the group ended.
    public struct Outcome: Sendable {
        /// The service that ended on its own and so stopped the group (nil: a shutdown request).
        public var endedFirst: String?
        /// Services that threw, with the error's description.
        public var failures: [(name: String, error: String)] = []
        /// Services that were still running when the grace period ended and were cancelled.
        public var cancelled: [String] = []
    }

    private let entries: [Entry]
    private let gracePeriod: Duration
    private let loop: EventLoop
    private let stopping: @Sendable (_ endedFirst: String?) -> Void

    /// `stopping` is called once, when the stop begins: with the service that ended on its own,
    /// or nil when the shutdown signal fired.
    public init(_ entries: [Entry], gracePeriod: Duration, loop: EventLoop = .shared,
                stopping: @escaping @Sendable (_ endedFirst: String?) -> Void = { _ in }) {
        self.entries = entries
        self.gracePeriod = gracePeriod
        self.loop = loop
        self.stopping = stopping
    }

    private enum Signal: Sendable {
        case shutdownRequested
        case finished(index: Int, error: String?)
        case graceOver
    }

    /// Runs every service until `shutdown` fires or one of them ends, then stops them all.
    public func run(until shutdown: ShutdownSignal) async -> Outcome {
        let signals = entries.map { _ in ShutdownSignal() }
        let (stream, continuation) = AsyncStream<Signal>.makeStream()
        return await withTaskGroup(of: Void.self) { group in
            for (index, entry) in entries.enumerated() {
                let signal = signals[index]
                group.addTask {
                    var failure: String?
                    do {
                        try await entry.service.run(until: signal)
                    } catch is CancellationError {
                    } catch {
                        failure = String(describing: error)
                    }
                    continuation.yield(.finished(index: index, error: failure))
                }
            }
            group.addTask {
                await shutdown.wait()
                continuation.yield(.shutdownRequested)
            }

            var outcome = Outcome()
            var running = Set(entries.indices)
            var signalsIterator = stream.makeAsyncIterator()
            func note(_ index: Int, _ error: String?) {
                running.remove(index)
                if let error { outcome.failures.append((entries[index].name, error)) }
            }

            // Run until asked to stop, or until a service ends on its own.
            waiting: while let signal = await signalsIterator.next() {
                switch signal {
                case .shutdownRequested, .graceOver:
                    break waiting
                case .finished(let index, let error):
                    note(index, error)
                    outcome.endedFirst = entries[index].name
                    break waiting
                }
            }

            // Stop the rest, last started first, within the grace period.
            stopping(outcome.endedFirst)
            let deadline = ContinuousClock.now.advanced(by: gracePeriod)
            let graceTimer = loop.schedule(at: deadline) { continuation.yield(.graceOver) }
            var graceOver = false
            for index in entries.indices.reversed() where running.contains(index) && !graceOver {
                signals[index].trigger()
                while running.contains(index), let signal = await signalsIterator.next() {
                    switch signal {
                    case .finished(let finished, let error): note(finished, error)
                    case .graceOver: graceOver = true
                    case .shutdownRequested: continue
                    }
                    if graceOver { break }
                }
            }
            loop.cancel(graceTimer)
            outcome.cancelled = entries.indices.filter { running.contains($0) }.map { entries[$0].name }
            group.cancelAll()
            continuation.finish()
            return outcome
        }
    }
}
