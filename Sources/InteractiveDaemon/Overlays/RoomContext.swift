import IPCProtocol

/// What the overlay pipeline needs to know about the room it serves.
struct RoomContext: Sendable, Equatable {
    var mediaId: String
    var mode: RoomMode
    /// The viewer's fanclub membership for this media.
    var fanclub: Bool
    var session: ViewerSession
    var settings: Settings
    /// The Socket.IO socket id while connected (live).
    var socketId: String?
}

/// Which room an overlay belongs to: the one it arrived in.
struct RoomKey: Sendable, Equatable {
    var mediaId: String
    var mode: RoomMode
}

extension RoomContext {
    var key: RoomKey { RoomKey(mediaId: mediaId, mode: mode) }
}
