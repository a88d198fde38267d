import Runtime
import Synchronization
import Testing

/// What the services did, in order.
private final class Log: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A service that records when it started and stopped, and may ignore its shutdown signal.
private struct Recorder: Service {
    let name: String
    let log: Log
    var endsAtOnce = false
    var ignoresShutdown = false

    func run(until shutdown: ShutdownSignal) async throws {
        log.append("start \(name)")
        if endsAtOnce {
            log.append("end \(name)")
            return
        }
        if ignoresShutdown {
            try? await EventLoop.shared.sleep(for: .seconds(60))
        } else {
            await shutdown.wait()
        }
        log.append("stop \(name)")
    }
}

@Suite struct ServiceGroupTests {
    @Test func stopsServicesInReverseOrderOnShutdown() async {
        let log = Log()
        let shutdown = ShutdownSignal()
        let group = ServiceGroup([.init("a", Recorder(name: "a", log: log)), .init("b", Recorder(name: "b", log: log)),
                                  .init("c", Recorder(name: "c", log: log))], gracePeriod: .seconds(30))
        async let outcome = group.run(until: shutdown)
        while log.all.count < 3 { await Task.yield() }
        shutdown.trigger()
        let result = await outcome
        #expect(Array(log.all.suffix(3)) == ["stop c", "stop b", "stop a"])
        #expect(result.endedFirst == nil)
        #expect(result.cancelled.isEmpty)
    }

    @Test func aServiceEndingOnItsOwnStopsTheOthers() async {
        let log = Log()
        let group = ServiceGroup([.init("a", Recorder(name: "a", log: log)),
                                  .init("b", Recorder(name: "b", log: log, endsAtOnce: true))], gracePeriod: .seconds(30))
        let result = await group.run(until: ShutdownSignal())
        #expect(result.endedFirst == "b")
        #expect(log.all.last == "stop a")
    }

    /// The grace is real time: long enough (3 s) for the polite service to be scheduled and stop
    /// on a loaded machine (50 ms was not, one run in some hundreds; 1 s was not with two builds
    /// running beside the tests).
    @Test func cancelsAServiceThatOverrunsTheGracePeriod() async {
        let log = Log()
        let shutdown = ShutdownSignal()
        shutdown.trigger()
        let group = ServiceGroup([.init("stuck", Recorder(name: "stuck", log: log, ignoresShutdown: true)),
                                  .init("polite", Recorder(name: "polite", log: log))], gracePeriod: .seconds(3))
        let result = await group.run(until: shutdown)
        #expect(result.cancelled == ["stuck"])
        #expect(log.all.contains("stop polite"))
    }

    @Test func aSignalTriggeredBeforeTheWaitReleasesItAtOnce() async {
        let signal = ShutdownSignal()
        signal.trigger()
        signal.trigger()
        await signal.wait()
        #expect(signal.isTriggered)
    }
}
