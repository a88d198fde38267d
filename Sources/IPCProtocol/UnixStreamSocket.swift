#if canImport(Glibc)
import Glibc
#endif

/// Opening a client connection to a Unix stream socket, shared by the blocking `IPCClient` and
/// the asynchronous client library.
public enum UnixStreamSocket {
    /// Connects a close-on-exec stream socket to `path` and returns its descriptor.
    /// With `nonBlocking`, the descriptor is in non-blocking mode (for a readiness loop).
    public static func connect(path: String, nonBlocking: Bool = false) throws(IPCClientError) -> Int32 {
        var flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { flags |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, flags, 0)
        guard fd >= 0 else { throw .unreachable(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw .unreachable(path: path, reason: "path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in path.utf8.enumerated() { raw[offset] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            // A non-blocking Unix socket reports a full listen backlog as EAGAIN: no connection
            // was made, and the caller may try again later.
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .unreachable(path: path, reason: reason)
        }
        return fd
    }
}
