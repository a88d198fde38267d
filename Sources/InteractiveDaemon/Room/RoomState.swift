import IPCProtocol
import JSONValue

/// The room the daemon is in, and how far it got.
struct Room: Sendable, Equatable {
    enum State: String, Sendable {
        case joining, joined, left, error
    }

    let mediaId: String
    let mode: RoomMode
    var fanclub: Bool
    var state: State
    var error: RPCError?

    /// The `room.state` event.
    var event: RoomStateEvent {
        RoomStateEvent(mediaId: mediaId, mode: mode, state: state.rawValue, fanclub: fanclub,
                       error: error.map { RoomStateEvent.Failure(name: $0.name, message: PeerText.clipped($0.message)) })
    }

    /// The status board's `room` section: `room.state`'s data.
    var json: JSONValue { event.data }

    var isActive: Bool { state == .joining || state == .joined }

    var key: RoomKey { RoomKey(mediaId: mediaId, mode: mode) }
}
