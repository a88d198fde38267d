import IPCProtocol
import JSONValue

/// Restart recovery: the viewer's session and the joined room are kept in the store (a file only
/// the daemon's user may read: it holds the token), and a restarted daemon logs in and joins
/// again on its own. Players learn of the restart from the new `bootId` (docs/ipc.md).
///
/// A kept room is joined again once per crash, not in a loop: before joining it at start the
/// daemon records the attempt, and clears it once the join settled (the room joined with its
/// data: the VOD scenario loaded, the live room's interactive status read or failed, even when
/// `statusWaitMs` let the events go on without it; or the room failed, changed or was left; or
/// a graceful stop). A daemon that finds the attempt of the same room still recorded (the one
/// before it died joining it: a reply it could not survive would kill it again) does not join
/// it on its own: it logs why and forgets the room, which a player's `room.join` joins again.
extension RoomController {
    static let sessionSettingKey = "viewerSession"
    static let roomSettingKey = "joinedRoom"
    static let restoreAttemptKey = "restoreAttempt"

    /// Keeps the session (nil: logged out, forgotten; with `rememberSession` false nothing of
    /// it is kept). A session the store no longer keeps is gone from its files too: the deleted
    /// row is overwritten and the write-ahead log emptied.
    func keepSession(_ kept: ViewerSession?) async {
        let stored = settings.rememberSession ? kept?.stored : nil
        await keep(Self.sessionSettingKey, stored, what: "the viewer's session")
        if stored == nil { await store.truncateLog() }
    }

    /// Keeps the room to join again after a restart (nil: left, forgotten).
    func keepRoom() async {
        let value: JSONValue? = room.flatMap { $0.isActive ? $0.stored : nil }
        await keep(Self.roomSettingKey, value, what: "the joined room")
    }

    /// Clears the restore attempt once the restored room's join settled: joined with its data
    /// (no interactive status request under way), failed, changed or left. Called on every room
    /// change and when an interactive status arrives.
    /// The attempt is forgotten at once; its row is deleted by a child task (the display path,
    /// which calls this, does not wait for the store).
    func settleRestoreAttempt() {
        guard let attempt = restoreAttempt else { return }
        if let room, room.stored == attempt.stored, room.state == .joining || (room.state == .joined && statusInFlight != nil) {
            return
        }
        restoreAttempt = nil
        work.start { [weak self] in await self?.keep(Self.restoreAttemptKey, nil, what: "the restore attempt") }
    }

    /// Forgets the restore attempt for a graceful stop: its row is deleted before the stop goes
    /// on (a settled attempt's deletion may still be under way, or cancelled with the room's work).
    func endRestoreAttempt() async {
        restoreAttempt = nil
        await keep(Self.restoreAttemptKey, nil, what: "the restore attempt")
    }

    private func keep(_ key: String, _ value: JSONValue?, what: String) async {
        do {
            try await store.setSetting(key, value)
        } catch {
            log.warning("Cannot keep \(what) in the store; a restart will not restore it: \(error)")
        }
    }

    /// At start, before any client is served (so that a client's logout or leave cannot be
    /// undone by it): logs the kept viewer in and takes the kept room as the room being joined,
    /// unless joining it killed the daemon before (see the type's documentation).
    /// `joinRestoredRoom` then does the joining.
    func restoreFromStore() async {
        let storedSession: JSONValue?
        let storedRoom: JSONValue?
        let storedAttempt: JSONValue?
        do {
            storedSession = try await store.setting(Self.sessionSettingKey)
            storedRoom = try await store.setting(Self.roomSettingKey)
            storedAttempt = try await store.setting(Self.restoreAttemptKey)
        } catch {
            log.error("Cannot read the kept session and room from the store: \(error)")
            return
        }
        if settings.rememberSession {
            await restore(session: storedSession.flatMap(ViewerSession.init(stored:)))
        } else if storedSession != nil {
            // Memory only: a session kept before is not restored, and is erased.
            await keepSession(nil)
        }
        var kept = storedRoom.flatMap(Room.init(stored:))
        if let room = kept, let attempt = storedAttempt.flatMap(Room.init(stored:)), attempt.stored == room.stored {
            log.error("Not joining the kept room \(room.mediaId) (\(room.mode.rawValue)) again: the daemon stopped while it joined it "
                      + "at its previous start; a player's room.join joins it", ["INTERACTIVE_MEDIA_ID": room.mediaId])
            kept = nil
            await keep(Self.roomSettingKey, nil, what: "the joined room")
        }
        await keep(Self.restoreAttemptKey, kept?.stored, what: "the restore attempt")
        restoreAttempt = kept
        var effects: [RoomEffect] = []
        core.restore(kept, missing: kept.map { $0.mode == .live ? settings.missingForLive : settings.missingForVOD } ?? [],
                     into: &effects)
        perform(effects)
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
