import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Why the local socket could not be opened.
struct ListenerError: Error, CustomStringConvertible {
    let description: String
}

/// The listening Unix socket: passed by systemd (socket activation) or bound by the daemon.
struct UnixListener: Sendable {
    let fd: Int32
    let path: String?
    /// True when systemd passed the socket; the daemon then never unlinks it.
    let activated: Bool

    /// The socket systemd passed (`sd_listen_fds`), if any.
    static func fromActivation() throws(ListenerError) -> UnixListener? {
        let count = sd_listen_fds(1)
        guard count > 0 else { return nil }
        guard count == 1 else { throw ListenerError(description: "systemd passed \(count) sockets; expected one") }
        let fd = SD_LISTEN_FDS_START
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw ListenerError(description: "the socket systemd passed is not a listening Unix stream socket")
        }
        setNonBlocking(fd)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return UnixListener(fd: fd, path: nil, activated: true)
    }

    /// Binds `path` (mode 0666), creating its folder. A stale socket file is replaced; a live
    /// daemon on it, or a file there that is not a socket, is an error.
    static func bind(path: String) throws(ListenerError) -> UnixListener {
        let folder = parentFolder(of: path)
        if !folder.isEmpty {
            LocalFiles.makeFolders(atPath: folder)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw ListenerError(description: "socket path \(path) is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in path.utf8.enumerated() { raw[offset] = byte }
        }
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard existing.st_mode & S_IFMT == S_IFSOCK else {
                throw ListenerError(description: "\(path) exists and is not a socket; not removing it")
            }
            if isLive(path: path) {
                throw ListenerError(description: "another daemon is already listening on \(path)")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ListenerError(description: "socket(): \(String(cString: strerror(errno)))") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o666) == 0, listen(fd, SOMAXCONN) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw ListenerError(description: "cannot listen on \(path): \(reason)")
        }
        return UnixListener(fd: fd, path: path, activated: false)
    }

    /// Closes the socket and removes the file the daemon created.
    func close() {
        Glibc.close(fd)
        if !activated, let path { unlink(path) }
    }

    private static func isLive(path: String) -> Bool {
        guard let probe = try? IPCProbe(path: path) else { return false }
        _ = probe
        return true
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }
}

/// Connects once to see whether a daemon answers on a path.
private struct IPCProbe {
    init(path: String) throws(ListenerError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[offset] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenerError(description: "socket()") }
        defer { Glibc.close(fd) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw ListenerError(description: "not live") }
    }
}
