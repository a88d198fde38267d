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

    /// `room.state`'s data and the status board's `room` section.
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "mediaId": .string(mediaId), "mode": .string(mode.rawValue), "state": .string(state.rawValue),
            "fanclub": .bool(fanclub), "error": .null,
        ]
        if let error {
            members["error"] = ["name": JSONValue(error.name), "message": .string(PeerText.clipped(error.message))]
        }
        return .object(members)
    }

    var isActive: Bool { state == .joining || state == .joined }
}
