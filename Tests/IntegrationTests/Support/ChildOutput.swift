import Foundation
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// Reads a child's pipe (its stdout or stderr) to the end, or until `deadline`, on the runtime's
/// event loop: a test waiting for a command's output suspends instead of blocking in `read`.
/// `what` names the command in the failure.
func readToEnd(_ handle: FileHandle, of what: String, until deadline: ContinuousClock.Instant) async throws -> Data {
    let fd = handle.fileDescriptor
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    let watched = try await WatchedDescriptor.watch(fd)
    do {
        let data = try await readUntilEnd(watched, of: what, until: deadline)
        await watched.stopWatching()
        return data
    } catch {
        await watched.stopWatching()
        throw error
    }
}

private func readUntilEnd(_ watched: WatchedDescriptor, of what: String, until deadline: ContinuousClock.Instant) async throws -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let (count, error) = buffer.withUnsafeMutableBytes { (read(watched.fd, $0.baseAddress, $0.count), errno) }
        if count > 0 {
            data.append(contentsOf: buffer[0..<count])
        } else if count == 0 {
            return data
        } else if error == EAGAIN || error == EWOULDBLOCK {
            guard try await watched.ready(until: deadline) else { throw TestFailure("the output of \(what) did not end in time") }
        } else if error != EINTR {
            throw TestFailure("reading the output of \(what): \(String(cString: strerror(error)))")
        }
    }
}
