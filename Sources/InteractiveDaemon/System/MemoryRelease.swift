import CInteractiveShims

/// Gives memory that was freed back to the kernel. glibc keeps freed heap pages for reuse, so
/// after a burst (a client that left megabytes unread, a flood) the resident size would stay
/// high; `malloc_trim` returns what is free.
enum MemoryRelease {
    /// A connection or a queue that held more than this asks for a trim when it lets go of it.
    static let threshold = 64 * 1024

    static func giveBack() {
        _ = interactive_release_free_memory()
    }
}
