import IPCProtocol
import JSONValue

/// Restart recovery: the viewer's session and the joined room are kept in the store (a file only
/// the daemon's user may read: it holds the token), and a restarted daemon logs in and joins
/// again on its own. Players learn of the restart from the new `bootId` (docs/ipc.md).
extension RoomController {
    static let sessionSettingKey = "viewerSession"
    static let roomSettingKey = "joinedRoom"

    /// Keeps the session (nil: logged out, forgotten).
    func keepSession(_ kept: ViewerSession?) async {
        await keep(Self.sessionSettingKey, kept?.stored, what: "the viewer's session")
    }

    /// Keeps the room to join again after a restart (nil: left, forgotten).
    func keepRoom() async {
        let value: JSONValue? = room.flatMap { $0.isActive ? $0.stored : nil }
        await keep(Self.roomSettingKey, value, what: "the joined room")
    }

    private func keep(_ key: String, _ value: JSONValue?, what: String) async {
        do {
            try await store.setSetting(key, value)
        } catch {
            log.warning("Cannot keep \(what) in the store; a restart will not restore it: \(error)")
        }
    }

    /// At start, before any client is served (so that a client's logout or leave cannot be
    /// undone by it): logs the kept viewer in and takes the kept room as the room being joined.
    /// Reads the store only; `joinRestoredRoom` then does the joining.
    func restoreFromStore() async {
        let storedSession: JSONValue?
        let storedRoom: JSONValue?
        do {
            storedSession = try await store.setting(Self.sessionSettingKey)
            storedRoom = try await store.setting(Self.roomSettingKey)
        } catch {
            log.error("Cannot read the kept session and room from the store: \(error)")
            return
        }
        await restore(session: storedSession.flatMap(ViewerSession.init(stored:)))
        let kept = storedRoom.flatMap(Room.init(stored:))
        var effects: [RoomEffect] = []
        core.restore(kept, missing: kept.map { $0.mode == .live ? settings.missingForLive : settings.missingForVOD } ?? [],
                     into: &effects)
        await perform(effects)
    }

    /// Joins the room `restoreFromStore` took (while clients are served: a VOD scenario is a
    /// REST call), unless a client changed the room meanwhile; `room.state` tells the players.
    func joinRestoredRoom() async {
        guard let current = room, current.state == .joining else { return }
        switch current.mode {
        case .live: await startLive()
        case .vod: await startVOD()
        }
    }
}

extension ViewerSession {
    /// What the store keeps of a logged-in viewer (the token included: the store is mode 0600).
    var stored: JSONValue {
        ["token": JSONValue(token), "userId": JSONValue(userId), "displayName": JSONValue(displayName)]
    }

    /// A kept session; nil unless it has a token and a user id.
    init?(stored: JSONValue) {
        guard let token = stored["token"]?.stringValue, let userId = stored["userId"]?.stringValue else { return nil }
        self.init(token: token, userId: userId, displayName: stored["displayName"]?.stringValue)
    }
}

extension Room {
    /// What the store keeps of a joined room.
    var stored: JSONValue { ["mediaId": .string(mediaId), "mode": .string(mode.rawValue), "fanclub": .bool(fanclub)] }

    /// A kept room, to be joined again.
    init?(stored: JSONValue) {
        guard let mediaId = stored["mediaId"]?.stringValue, !mediaId.isEmpty,
              let mode = stored["mode"]?.stringValue.flatMap(RoomMode.init(rawValue:)) else { return nil }
        self.init(mediaId: mediaId, mode: mode, fanclub: stored["fanclub"]?.boolValue ?? false, state: .joining, error: nil)
    }
}
