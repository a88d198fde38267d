import JSONValue
import Runtime
import SocketIO

/// emit-ack over the live Socket.IO connection.
final class LiveAckTransport: AckTransport {
    let socket: SocketIOClient

    /// How long the client keeps an ack awaited. A server that never acknowledges is covered by
    /// the heartbeat's proof (within two ping intervals); past this the awaited ack is dropped.
    static let ackTimeout: Duration = .seconds(120)

    init(socket: SocketIOClient) {
        self.socket = socket
    }

    func emitAck(_ payload: [UInt8], acknowledged: @escaping @LoopActor () -> Void) -> AckSend {
        do {
            let mark = try socket.emitWithAck("emit-ack", encodedArgument: payload, timeout: Self.ackTimeout, whenDisconnected: .fail) { result in
                if case .success = result { acknowledged() }
            }
            return .written(mark)
        } catch {
            return .notConnected
        }
    }
}
