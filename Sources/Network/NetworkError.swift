/// What can go wrong with a connection, from the name lookup to the last byte.
public enum NetworkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name could not be resolved.
    case resolveFailed(host: String, reason: String)
    /// No TCP connection could be made to any address of the host.
    case connectFailed(String)
    /// Connecting (TCP and TLS) took longer than allowed.
    case timeout(String)
    /// The server's certificate was refused (unknown CA, expired, wrong host name, ...).
    case tlsVerificationFailed(String)
    /// TLS failed for another reason than certificate verification.
    case tlsFailed(String)
    /// The connection broke (reset, read or write error, too much output queued).
    case connectionLost(String)
    /// The owner closed or aborted the connection, or its task was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .resolveFailed(let host, let reason): return "cannot resolve \(host): \(reason)"
        case .connectFailed(let reason): return "cannot connect: \(reason)"
        case .timeout(let what): return "timed out: \(what)"
        case .tlsVerificationFailed(let reason): return "TLS certificate refused: \(reason)"
        case .tlsFailed(let reason): return "TLS error: \(reason)"
        case .connectionLost(let reason): return "connection lost: \(reason)"
        case .cancelled: return "cancelled"
        }
    }
}
