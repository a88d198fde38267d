import JSONValue
import Runtime
import SocketIO

/// Whether an `emit-ack` went out.
enum AckSend: Sendable, Equatable {
    /// Written on the connection at the mark (nil: the connection gives no proof of carriage).
    case written(SocketIOWriteMark?)
    /// The connection is down: nothing was written.
    case notConnected
}

/// How acks leave the daemon: the live Socket.IO connection implements it (`LiveAckTransport`).
@LoopActor
protocol AckTransport: AnyObject {
    /// Emits `emit-ack` with `payload` (its JSON text) at once; `acknowledged` runs if and when
    /// the server acknowledges it.
    func emitAck(_ payload: [UInt8], acknowledged: @escaping @LoopActor () -> Void) -> AckSend
}
