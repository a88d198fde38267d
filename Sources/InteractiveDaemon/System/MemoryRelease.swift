import CInteractiveShims
import Runtime

/// Gives memory that was freed back to the kernel. glibc keeps freed heap pages for reuse, so
/// after a burst (a client that left megabytes unread, a flood of backend events) the resident
/// size would stay high; `malloc_trim` returns what is free.
enum MemoryRelease {
    /// A connection or a queue that held more than this asks for a trim when it lets go of it.
    static let threshold = 64 * 1024
    /// How often `run` looks at the heap, and how much free memory makes it trim.
    static let checkInterval = Duration.seconds(10)
    static let idleFreeBytes = 2 << 20

    static func giveBack() {
        _ = interactive_release_free_memory()
    }

    /// Until cancelled: every `checkInterval`, trims when more than `idleFreeBytes` of the heap
    /// are free (after a burst; an idle daemon's heap has little free and is left alone). The
    /// trim walks the heap, so it runs as a `BlockingCall`, not on the event loop its task prefers;
    /// the check (`mallinfo2`, a walk of the free lists' heads) stays on the loop, so that an idle
    /// daemon wakes no other thread.
    static func run() async {
        while !Task.isCancelled {
            do { try await EventLoop.shared.sleep(for: checkInterval) } catch { return }
            if interactive_free_heap_bytes() > idleFreeBytes {
                do { try await BlockingCall.run { giveBack() } } catch { return }
            }
        }
    }
}
