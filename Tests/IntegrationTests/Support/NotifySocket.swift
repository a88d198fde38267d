import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A NOTIFY_SOCKET of the test's own: receives what the daemon tells the service manager.
final class NotifySocket: @unchecked Sendable {
    let path: String
    private let fd: Int32
    /// Every datagram received so far (guarded by being used from one test at a time).
    private(set) var messages: [String] = []

    init(directory: String) throws {
        path = directory + "/notify.sock"
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in path.utf8.enumerated() { raw[offset] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw TestFailure("cannot bind notify socket \(path)") }
    }

    deinit { close(fd) }

    /// Waits until a received message contains `needle`; returns that message. With `since`,
    /// only messages from that index of `messages` on count (`messages.count` marks "from now").
    @discardableResult
    func waitFor(_ needle: String, since mark: Int = 0, timeoutMs: Int = 10_000) async throws -> String {
        try await waitFor(needle, since: mark, timeoutMs: timeoutMs) { $0.contains(needle) }
    }

    /// Waits until a received message satisfies `predicate` (`description` names it in the failure).
    @discardableResult
    func waitFor(_ description: String, since mark: Int = 0, timeoutMs: Int = 10_000,
                 where predicate: (String) -> Bool) async throws -> String {
        func seen() -> String? { messages.dropFirst(mark).first(where: predicate) }
        _ = try await eventually(timeoutMs: timeoutMs) {
            receivePending()
            return seen() != nil
        }
        guard let message = seen() else {
            throw TestFailure("no notify message with \(description) within \(timeoutMs) ms; got \(messages)")
        }
        return message
    }

    /// Appends the datagrams already waiting to `messages` (never blocks).
    private func receivePending() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
