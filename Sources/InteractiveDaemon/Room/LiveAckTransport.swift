import JSONValue
import SocketIO

/// emit-ack over the live Socket.IO connection.
struct LiveAckTransport: AckTransport {
    let socket: SocketIOClient

    var executor: (any TaskExecutor)? { socket.ioExecutor }

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

extension TrackingService: OverlayTracker {}
