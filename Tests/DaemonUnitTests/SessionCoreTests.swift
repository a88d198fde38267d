import IPCProtocol
import Testing
@testable import InteractiveDaemon

/// Login, logout and the kept session: what each does to the store, the players, playback and
/// the live room.
@Suite struct SessionCoreTests {
    static let alice = ViewerSession(token: "token-alice", userId: "alice", displayName: "Alice")

    static func room(_ mode: RoomMode = .live, _ state: Room.State) -> Room {
        Room(mediaId: "m1", mode: mode, fanclub: false, state: state, error: nil)
    }

    static func reconnects(_ effects: [SessionEffect]) -> Bool {
        effects.contains { if case .reconnectLive = $0 { return true } else { return false } }
    }

    @Test func aLoginIsKeptToldAndGivenToPlayback() {
        var core = SessionCore()
        let effects = core.login(token: "token-alice", userId: "alice", displayName: "Alice", room: nil)
        #expect(core.session == Self.alice)
        #expect(core.kept == Self.alice)
        #expect(effects == [.log(.loggedIn(userId: "alice")), .keep, .publish, .playback])
        #expect(core.session.publicState == SessionState(loggedIn: true, userId: "alice", displayName: "Alice"))
    }

    @Test func aLogoutForgetsTheKeptSession() {
        var core = SessionCore()
        _ = core.login(token: "token-alice", userId: "alice", displayName: nil, room: nil)
        let effects = core.logout(room: nil)
        #expect(core.session == .anonymous)
        #expect(core.kept == nil, "the kept session is forgotten")
        #expect(effects == [.log(.loggedOut(userId: "alice")), .keep, .publish, .playback])
        #expect(core.session.publicState == SessionState(loggedIn: false, userId: nil, displayName: nil))
        #expect(core.logout(room: nil).first == .log(.loggedOut(userId: nil)))
    }

    @Test(arguments: [Room.State.joining, .joined, .error])
    func aLiveRoomNotLeftReconnectsWithTheNewCredentials(_ state: Room.State) {
        var core = SessionCore()
        let login = core.login(token: "t", userId: "alice", displayName: nil, room: Self.room(.live, state))
        #expect(login.last == .reconnectLive(reason: "new login"))
        #expect(Self.reconnects(core.logout(room: Self.room(.live, state))))
    }

    @Test func aLeftOrVODRoomDoesNotReconnect() {
        var core = SessionCore()
        #expect(!Self.reconnects(core.login(token: "t", userId: "alice", displayName: nil, room: Self.room(.live, .left))))
        #expect(!Self.reconnects(core.login(token: "t", userId: "alice", displayName: nil, room: Self.room(.vod, .joined))))
        #expect(!Self.reconnects(core.logout(room: Self.room(.vod, .joining))))
    }

    @Test func theKeptSessionIsTakenAtStartOnly() {
        var core = SessionCore()
        #expect(core.restore(nil, room: nil).isEmpty)
        // A room already set (a client joined first): the kept viewer is not brought back.
        #expect(core.restore(Self.alice, room: Self.room(.live, .joining)).isEmpty)
        #expect(core.session == .anonymous)
        let effects = core.restore(Self.alice, room: nil)
        // It came from the store: it is not written again.
        #expect(effects == [.log(.restored(userId: "alice")), .publish, .playback])
        #expect(core.session == Self.alice)
    }

    @Test func aClientLoginIsNotUndoneByTheKeptSession() {
        var core = SessionCore()
        _ = core.login(token: "token-bob", userId: "bob", displayName: nil, room: nil)
        #expect(core.restore(Self.alice, room: nil).isEmpty)
        #expect(core.session.userId == "bob")
    }
}

/// Session expiry (issue 21, item 6): a refused token is said once, and only for the viewer's
/// current token; a new login clears it.
@Suite struct SessionExpiryTests {
    @Test func aRefusedTokenExpiresTheSessionOnce() {
        var core = SessionCore()
        _ = core.login(token: "token-alice", userId: "alice", displayName: "Alice", room: nil)
        let effects = core.refused(token: "token-alice", source: "answer")
        #expect(effects == [.log(.expired(userId: "alice", source: "answer")), .publish, .loginRequired])
        #expect(core.session.expired)
        #expect(core.session.publicState == SessionState(loggedIn: true, userId: "alice", displayName: "Alice", expired: true))
        #expect(core.refused(token: "token-alice", source: "VIP status").isEmpty, "once per expiry")
    }

    @Test func aTokenNoLongerTheViewersChangesNothing() {
        var core = SessionCore()
        _ = core.login(token: "token-old", userId: "alice", displayName: nil, room: nil)
        _ = core.login(token: "token-new", userId: "alice", displayName: nil, room: nil)
        #expect(core.refused(token: "token-old", source: "play request").isEmpty)
        #expect(!core.session.expired)
        _ = core.logout(room: nil)
        #expect(core.refused(token: "token-new", source: "answer").isEmpty)
    }

    @Test func aNewLoginClearsTheExpiry() {
        var core = SessionCore()
        _ = core.login(token: "token-alice", userId: "alice", displayName: nil, room: nil)
        _ = core.refused(token: "token-alice", source: "live connection")
        _ = core.login(token: "token-alice-2", userId: "alice", displayName: nil, room: nil)
        #expect(!core.session.expired)
        #expect(core.refused(token: "token-alice-2", source: "answer").count == 3, "the new token may expire in turn")
    }

    @Test func observersSeeWhetherButNotWho() {
        let state = SessionState(loggedIn: true, userId: "alice", displayName: "Alice", expired: true)
        #expect(state.observed.json == ["loggedIn": true, "expired": true])
        #expect(state.json == ["loggedIn": true, "userId": "alice", "displayName": "Alice", "expired": true])
        #expect(SessionState(json: state.observed.json) == state.observed)
        #expect(SessionState(json: state.json) == state)
    }
}
