import Runtime
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct WatchedDescriptorTests {
    /// A writer waiting for room on a full socket is let go when the peer shuts the connection
    /// down without closing it (its unread bytes keep the socket full: no EPOLLOUT ever comes).
    /// Whether the hang-up comes before or during the wait, the wait must end.
    @Test func aWriterWaitingForRoomWakesWhenThePeerShutsDown() async throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        let (writer, peer) = (fds[0], fds[1])
        defer { close(peer) }
        var chunk = [UInt8](repeating: 0x61, count: 4096)
        while send(writer, &chunk, chunk.count, Int32(MSG_NOSIGNAL)) > 0 {}
        #expect(errno == EAGAIN)
        let watched = try await WatchedDescriptor.watch(writer)
        // Without the wake-up, the wait would end only at the timeout, which then throws.
        shutdown(peer, Int32(SHUT_RDWR))
        try await withTimeout(.seconds(5), "a writer's wait after the peer's shutdown") { try await watched.writable() }
        #expect(send(writer, &chunk, chunk.count, Int32(MSG_NOSIGNAL)) < 0)
        #expect(errno == EPIPE)
        await watched.stopWatching()
        close(writer)
    }
}
