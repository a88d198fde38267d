import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The process signals the daemon acts on.
public enum ProcessSignal: Int32, Sendable {
    case terminate = 15  // SIGTERM
    case interrupt = 2  // SIGINT
    case hangup = 1  // SIGHUP
}

/// Turns SIGTERM, SIGINT and SIGHUP into an async stream (dispatch signal sources).
public enum SignalStream {
    public static func make() -> AsyncStream<ProcessSignal> {
        signal(SIGPIPE, SIG_IGN)
        // A parent may have started us with these signals blocked; the sources need them delivered.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for kind in [ProcessSignal.terminate, .interrupt, .hangup] { sigaddset(&unblock, kind.rawValue) }
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        let (stream, continuation) = AsyncStream<ProcessSignal>.makeStream()
        let queue = DispatchQueue(label: "interactived.signals")
        let sources = [ProcessSignal.terminate, .interrupt, .hangup].map { kind -> any DispatchSourceSignal in
            signal(kind.rawValue, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: kind.rawValue, queue: queue)
            source.setEventHandler { continuation.yield(kind) }
            source.resume()
            return source
        }
        let holder = SourceHolder(sources)
        continuation.onTermination = { _ in holder.cancel() }
        return stream
    }

    private final class SourceHolder: @unchecked Sendable {
        // Written once at init; cancel() only calls thread-safe DispatchSource methods.
        private let sources: [any DispatchSourceSignal]
        init(_ sources: [any DispatchSourceSignal]) { self.sources = sources }
        func cancel() { sources.forEach { $0.cancel() } }
    }
}
