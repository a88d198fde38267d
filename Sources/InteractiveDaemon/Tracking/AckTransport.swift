import JSONValue

/// What became of one `emit-ack`.
enum AckDelivery: Sendable {
    /// The server acknowledged the emit.
    case acked
    /// No ack within the timeout while the connection stayed up.
    case notAcked
    /// The connection was down or dropped before the ack.
    case notConnected
}

/// How acks leave the daemon: the live Socket.IO connection implements it.
protocol AckTransport: Sendable {
    /// Emits `emit-ack` with `payload` and waits for the server's ack up to `timeout`.
    func emitAck(_ payload: JSONValue, timeout: Duration) async -> AckDelivery
}
