import Network

/// The TLS settings of the connection to the server (defined by the Network module).
public typealias TLSOptions = Network.TLSOptions

extension SocketIOError {
    /// The Socket.IO error for a failure of the connection under it.
    init(_ error: NetworkError) {
        switch error {
        case .resolveFailed(let host, let reason): self = .dnsFailed(host: host, reason: reason)
        case .connectFailed(let reason): self = .connectFailed(reason)
        case .timeout(let what): self = .timeout(what)
        case .tlsVerificationFailed(let reason): self = .tlsVerificationFailed(reason)
        case .tlsFailed(let reason): self = .tlsFailed(reason)
        case .connectionLost(let reason): self = .connectionLost(reason)
        case .cancelled: self = .disconnectedByClient
        }
    }
}
