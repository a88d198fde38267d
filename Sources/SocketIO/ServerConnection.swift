import Network

/// Opens the TCP (TLS for `wss`/`https`) connection a WebSocket runs on.
enum ServerConnection {
    /// Connects to `endpoint` within `timeout`, TLS-verified with `tls` when the endpoint is secure.
    static func open(
        _ endpoint: Endpoint, tls: TLSOptions, timeout: Duration, log: @escaping @Sendable (SocketIOLogLevel, String) -> Void
    ) async throws(SocketIOError) -> Connection {
        if endpoint.secure && tls.insecure {
            log(.warning, "TLS certificate verification is disabled for \(endpoint.host) (insecure)")
        }
        do {
            return try await Connection.connect(
                host: endpoint.host, port: endpoint.port, tls: endpoint.secure ? tls : nil, timeout: timeout,
                log: { log(.debug, $0) })
        } catch let error as NetworkError {
            throw SocketIOError(error)
        } catch {
            throw .disconnectedByClient  // cancelled
        }
    }
}
