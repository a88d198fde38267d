import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// One resolved socket address (IPv4 or IPv6), kept as raw `sockaddr` bytes.
package struct SocketAddress: Sendable, Equatable {
    package let family: Int32
    package let bytes: [UInt8]

    /// Calls `body` with the address as a `sockaddr` pointer and its length (nil for no bytes).
    package func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R? {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return nil }
            return body(base.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }

    /// The numeric form, for log messages.
    package var description: String {
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let ok = withSockAddr { address, length in
            getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0
        }
        guard ok == true else { return "?" }
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Host name resolution. An IP literal is converted at once; a name is looked up with getaddrinfo
/// as a `BlockingCall`, so that it never holds the event loop or a thread of Swift's cooperative pool.
package enum DNSResolver {
    /// IPv4 and IPv6 addresses of `host`, in the order getaddrinfo prefers. Cancellation returns
    /// at once with `CancellationError`; the lookup still finishes in the background.
    package static func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        if let literal = numericAddress(host: host, port: port) { return [literal] }
        return try await BlockingCall.run { try lookup(host: host, port: port) }
    }

    private static func lookup(host: String, port: Int) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            throw NetworkError.resolveFailed(host: host, reason: reason)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr,
               entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
                let raw = UnsafeRawBufferPointer(start: address, count: Int(entry.pointee.ai_addrlen))
                let candidate = SocketAddress(family: entry.pointee.ai_family, bytes: Array(raw))
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw NetworkError.resolveFailed(host: host, reason: "no address") }
        return addresses
    }

    /// `host` as an IPv4 or IPv6 literal (brackets allowed), without a lookup; nil for a name.
    package static func numericAddress(host: String, port: Int) -> SocketAddress? {
        guard (0...65_535).contains(port) else { return nil }
        var literal = host
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, literal, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
            return SocketAddress(family: AF_INET, bytes: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, literal, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
            return SocketAddress(family: AF_INET6, bytes: withUnsafeBytes(of: v6) { Array($0) })
        }
        return nil
    }
}
