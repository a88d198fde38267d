import JSONValue
import SocketIO

/// emit-ack over the live Socket.IO connection.
struct LiveAckTransport: AckTransport {
    let socket: SocketIOClient

    func emitAck(_ payload: JSONValue, timeout: Duration) async -> AckDelivery {
        do {
            _ = try await socket.emitWithAck("emit-ack", [payload], timeout: timeout, whenDisconnected: .fail)
            return .acked
        } catch SocketIOError.timeout {
            return .notAcked
        } catch {
            return .notConnected
        }
    }
}
