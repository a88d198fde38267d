import CRuntimeShims
#if canImport(Glibc)
import Glibc
#endif

/// Starts an OS thread that runs `body` for the life of the process (the event loop, the
/// bookkeeping executor). A plain pthread: the daemon links FoundationEssentials only, which has
/// no `Thread`.
enum DedicatedThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    /// Returns false when the thread could not be created (the process is out of resources).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body {
            runtime_set_thread_name(name)
            body()
        }).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
