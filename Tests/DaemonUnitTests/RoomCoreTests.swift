import IPCProtocol
import Testing
@testable import InteractiveDaemon

/// The room and its live connection against a test clock: entering and leaving, how the
/// connection's states move the room, join-room's ack, and how an outage is logged.
@Suite struct RoomCoreTests {
    static let t0 = ContinuousClock.now

    static func room(_ mediaId: String = "m1", mode: RoomMode = .live, fanclub: Bool = false,
                     state: Room.State = .joining) -> Room {
        Room(mediaId: mediaId, mode: mode, fanclub: fanclub, state: state, error: nil)
    }

    /// A core in live room m1, `state`, on a connection `s1` that is up.
    static func connectedCore(state: Room.State = .joined) -> RoomCore {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(room(state: state), into: &effects)
        _ = core.link(.connecting(attempt: 1), now: t0)
        _ = core.link(.connected(socketId: "s1"), now: t0)
        return core
    }

    static func rooms(_ effects: [RoomEffect]) -> [Room.State] {
        effects.compactMap { if case .room(let room, _) = $0 { return room.state } else { return nil } }
    }

    static func connections(_ effects: [RoomEffect]) -> [ConnectionStateEvent] {
        effects.compactMap { if case .connection(let state) = $0 { return state } else { return nil } }
    }

    static func logs(_ effects: [RoomEffect]) -> [RoomLogLine] {
        effects.compactMap { if case .log(let line) = $0 { return line } else { return nil } }
    }

    // MARK: Room states

    @Test func aRoomChangeIsPublishedOnlyWhenSomethingPlayersSeeChanged() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(), into: &effects)
        core.set(Self.room(), into: &effects)
        core.set(Self.room(fanclub: true), into: &effects)
        core.set(Self.room(fanclub: true, state: .joined), into: &effects)
        let published = effects.map { effect -> Bool? in if case .room(_, let changed) = effect { return changed } else { return nil } }
        #expect(published == [true, false, true, true])
        #expect(core.room?.state == .joined)
    }

    @Test func enteringARoomNeedsItsModesConfiguration() {
        let core = RoomCore()
        #expect(core.entry(mediaId: "m1", mode: .live, fanclub: false, missing: ["socketUrl"]) == .notConfigured(["socketUrl"]))
    }

    @Test func enteringFromNoRoomJoinsAFreshOne() {
        let core = RoomCore()
        #expect(core.entry(mediaId: "m1", mode: .vod, fanclub: true, missing: []) ==
            .enter(fresh: Self.room(mode: .vod, fanclub: true), leaving: nil))
    }

    @Test func theSameActiveRoomStaysAndTakesAChangedFanclubInPlace() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(state: .joined), into: &effects)
        #expect(core.entry(mediaId: "m1", mode: .live, fanclub: false, missing: []) == .stay(nil))
        #expect(core.entry(mediaId: "m1", mode: .live, fanclub: true, missing: []) == .stay(Self.room(fanclub: true, state: .joined)))
    }

    @Test func anotherRoomOrModeLeavesTheActiveOneFirst() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(state: .joined), into: &effects)
        #expect(core.entry(mediaId: "m2", mode: .live, fanclub: false, missing: []) ==
            .enter(fresh: Self.room("m2"), leaving: Self.room(state: .joined)))
        #expect(core.entry(mediaId: "m1", mode: .vod, fanclub: false, missing: []) ==
            .enter(fresh: Self.room(mode: .vod), leaving: Self.room(state: .joined)))
    }

    @Test func aRoomInErrorOrLeftIsNotLeftAgainOnEntry() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(state: .error), into: &effects)
        #expect(core.entry(mediaId: "m1", mode: .live, fanclub: false, missing: []) == .enter(fresh: Self.room(), leaving: nil))
    }

    @Test func leavingTakesAnyRoomNotLeftYetErrorIncluded() {
        var core = RoomCore()
        #expect(core.leaving == nil)
        var effects: [RoomEffect] = []
        core.set(Self.room(state: .error), into: &effects)
        #expect(core.leaving?.state == .error)
        core.set(RoomCore.left(Self.room(state: .error)), into: &effects)
        #expect(core.leaving == nil)
        #expect(core.room?.state == .left)
        #expect(core.room?.error == nil)
    }

    // MARK: The connection

    @Test func theFirstConnectionIsConnectingThenConnectedAndSendsJoin() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(), into: &effects)
        let connecting = core.link(.connecting(attempt: 1), now: Self.t0)
        #expect(connecting == [.connection(ConnectionStateEvent(state: "connecting", attempt: 1, retryInMs: 0))])
        let connected = core.link(.connected(socketId: "s1"), now: Self.t0)
        #expect(connected == [.log(.connected(socketId: "s1", outage: nil, failedAttempts: 0)),
                              .connection(ConnectionStateEvent(state: "connected", socketId: "s1")),
                              .context, .transport(connected: true), .sendJoin])
        #expect(core.socketId == "s1")
        #expect(core.everConnected)
    }

    @Test func joinGoesOncePerConnectionForALiveRoomBeingJoined() {
        var core = Self.connectedCore(state: .joining)
        #expect(core.joinToSend() == "s1")
        #expect(core.joinToSend() == nil)
        core.rejoinNeeded()
        #expect(core.joinToSend() == "s1")
    }

    @Test func noJoinWithoutAConnectionOrForAVODRoom() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(), into: &effects)
        #expect(core.joinToSend() == nil)
        var vod = Self.connectedCore()
        vod.set(Self.room(mode: .vod), into: &effects)
        #expect(vod.joinToSend() == nil)
    }

    @Test func theAckJoinsTheRoom() {
        var core = Self.connectedCore(state: .joining)
        let effects = core.joinAcknowledged(mediaId: "m1", socketId: "s1", acked: true)
        #expect(Self.rooms(effects) == [.joined])
        #expect(Self.logs(effects) == [.joined(mediaId: "m1")])
    }

    @Test func noAckInTimeStillJoinsWithAWarning() {
        var core = Self.connectedCore(state: .joining)
        let effects = core.joinAcknowledged(mediaId: "m1", socketId: "s1", acked: false)
        #expect(Self.logs(effects) == [.joinNotAcked(mediaId: "m1"), .joined(mediaId: "m1")])
        #expect(core.room?.state == .joined)
    }

    @Test func anAckForAnotherConnectionOrRoomIsIgnored() {
        var core = Self.connectedCore(state: .joining)
        #expect(core.joinAcknowledged(mediaId: "m1", socketId: "s0", acked: true).isEmpty)
        #expect(core.joinAcknowledged(mediaId: "m2", socketId: "s1", acked: true).isEmpty)
        var joined = Self.connectedCore(state: .joined)
        #expect(joined.joinAcknowledged(mediaId: "m1", socketId: "s1", acked: true).isEmpty)
    }

    @Test func aLostConnectionTakesTheJoinedRoomBackToJoiningAndWarnsOnce() {
        var core = Self.connectedCore()
        let lost = core.link(.connecting(attempt: 1), now: Self.t0 + .seconds(10))
        #expect(lost.first == .transport(connected: false))
        #expect(Self.rooms(lost) == [.joining])
        #expect(Self.logs(lost) == [.failure(.outageBegins, reason: "connection lost", attempt: 1, retryIn: .zero, everConnected: true)])
        #expect(Self.connections(lost) == [ConnectionStateEvent(state: "reconnecting", attempt: 1, retryInMs: 0, error: "connection lost")])
        #expect(core.socketId == nil)
        // Later failures of the same outage are debug lines.
        let failed = core.link(.reconnecting(attempt: 2, retryIn: .milliseconds(1500), error: "refused"), now: Self.t0 + .seconds(11))
        #expect(Self.logs(failed) == [.failure(.stillOut(failures: 1), reason: "refused", attempt: 2, retryIn: .milliseconds(1500),
                                               everConnected: true)])
        #expect(Self.connections(failed) == [ConnectionStateEvent(state: "reconnecting", attempt: 2, retryInMs: 1500, error: "refused")])
        // The room was already joining: not published again.
        #expect(Self.rooms(failed) == [])
        // Back: one line with how long it lasted.
        let back = core.link(.connected(socketId: "s2"), now: Self.t0 + .seconds(14))
        #expect(Self.logs(back) == [.connected(socketId: "s2", outage: .seconds(4), failedAttempts: 1)])
    }

    @Test func attemptsBeforeTheFirstConnectionAreAnUnreachableBackend() {
        var core = RoomCore()
        let failed = core.link(.reconnecting(attempt: 1, retryIn: .seconds(1), error: "ECONNREFUSED"), now: Self.t0)
        #expect(Self.logs(failed) == [.failure(.outageBegins, reason: "ECONNREFUSED", attempt: 1, retryIn: .seconds(1), everConnected: false)])
        let next = core.link(.connecting(attempt: 2), now: Self.t0 + .seconds(1))
        #expect(Self.connections(next) == [ConnectionStateEvent(state: "connecting", attempt: 2, retryInMs: 0)])
    }

    @Test func aRefusalIsTheRoomsError() {
        var core = Self.connectedCore()
        let effects = core.link(.refused(error: "unauthorized"), now: Self.t0)
        #expect(Self.logs(effects) == [.refused("unauthorized")])
        #expect(Self.connections(effects) == [ConnectionStateEvent(state: "disconnected", error: "unauthorized")])
        #expect(Self.rooms(effects) == [.joining, .error])
        #expect(core.room?.error?.name == RPCError.daemon(.backendRefused, "").name)
        #expect(core.outage.since == nil)
    }

    @Test func anEndByTheServerIsTheRoomsErrorButAClosureByTheClientIsNot() {
        var ended = Self.connectedCore()
        let effects = ended.link(.disconnected(error: "server closed", byClient: false), now: Self.t0)
        #expect(Self.logs(effects) == [.ended("server closed")])
        #expect(ended.room?.state == .error)
        #expect(ended.room?.error?.name == RPCError.daemon(.backendUnreachable, "").name)
        var closed = Self.connectedCore()
        let quiet = closed.link(.disconnected(error: "closed", byClient: true), now: Self.t0)
        #expect(Self.logs(quiet).isEmpty)
        #expect(Self.connections(quiet).isEmpty)
        #expect(closed.room?.state == .joining)
    }

    @Test func aVODRoomIsNotMovedByTheConnection() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(mode: .vod, state: .joined), into: &effects)
        _ = core.link(.connected(socketId: "s1"), now: Self.t0)
        let lost = core.link(.refused(error: "x"), now: Self.t0)
        #expect(Self.rooms(lost).isEmpty)
        #expect(core.room?.state == .joined)
    }

    @Test func aClosedConnectionForgetsEverything() {
        var core = Self.connectedCore()
        _ = core.link(.reconnecting(attempt: 1, retryIn: .seconds(1), error: "x"), now: Self.t0)
        core.connectionClosed()
        #expect(core.socketId == nil)
        #expect(!core.everConnected)
        #expect(core.outage.since == nil)
        // The next first failure warns again, as unreachable.
        let failed = core.link(.reconnecting(attempt: 1, retryIn: .seconds(1), error: "y"), now: Self.t0)
        #expect(Self.logs(failed).first == .failure(.outageBegins, reason: "y", attempt: 1, retryIn: .seconds(1), everConnected: false))
    }

    @Test func aLongErrorIsClippedInTheConnectionState() {
        var core = RoomCore()
        let long = String(repeating: "e", count: 5000)
        let effects = core.link(.refused(error: long), now: Self.t0)
        let error = Self.connections(effects).first?.error ?? ""
        #expect(error.count < long.count)
        #expect(error == PeerText.clipped(long))
    }

    // MARK: VOD and restart

    @Test func aLoadedScenarioJoinsTheVODRoom() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(mode: .vod), into: &effects)
        effects = []
        #expect(core.scenarioLoaded(mediaId: "m1", .success(3), into: &effects))
        #expect(Self.logs(effects) == [.vodJoined(mediaId: "m1", timelines: 3)])
        #expect(Self.rooms(effects) == [.joined])
    }

    @Test func aScenarioThatDoesNotLoadIsTheRoomsError() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room(mode: .vod), into: &effects)
        effects = []
        let error = RPCError.daemon(.scenarioUnavailable, "no scenario")
        #expect(!core.scenarioLoaded(mediaId: "m1", .failure(error), into: &effects))
        #expect(Self.logs(effects) == [.scenarioUnavailable(mediaId: "m1", message: "no scenario")])
        #expect(core.room?.state == .error)
        #expect(core.room?.error == error)
    }

    @Test func aScenarioOfARoomLeftMeanwhileIsNotTaken() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Self.room("m2", mode: .vod), into: &effects)
        effects = []
        #expect(!core.scenarioLoaded(mediaId: "m1", .success(3), into: &effects))
        core.set(RoomCore.left(Self.room("m1", mode: .vod)), into: &effects)
        effects = []
        #expect(!core.scenarioLoaded(mediaId: "m1", .success(3), into: &effects))
        #expect(effects.isEmpty)
    }

    @Test func theKeptRoomIsJoinedAgainAfterARestart() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.restore(Self.room(fanclub: true, state: .joined), missing: [], into: &effects)
        #expect(Self.logs(effects) == [.rejoining(Self.room(fanclub: true, state: .joined))])
        #expect(core.room == Self.room(fanclub: true))
    }

    @Test func theKeptRoomWaitsForItsConfigurationAndNeverReplacesARoomSetMeanwhile() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.restore(Self.room(), missing: ["socketUrl"], into: &effects)
        #expect(Self.logs(effects) == [.cannotRejoin(Self.room(), missing: ["socketUrl"])])
        #expect(core.room == nil)
        core.set(Self.room("m2", mode: .vod), into: &effects)
        effects = []
        core.restore(Self.room(), missing: [], into: &effects)
        #expect(effects.isEmpty)
        #expect(core.room?.mediaId == "m2")
        core.restore(nil, missing: [], into: &effects)
        #expect(effects.isEmpty)
    }

    // MARK: The room the backend's events belong to (issue 21, item 3)

    @Test func afterALeaveOnTheConnectionEventsAreTheOldRoomsUntilTheNewJoinAck() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Room(mediaId: "m1", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        #expect(core.arrivalRoom == nil, "no connection yet")
        _ = core.link(.connected(socketId: "s1"), now: Self.t0)
        #expect(core.arrivalRoom?.mediaId == "m1")
        _ = core.joinAcknowledged(mediaId: "m1", socketId: "s1", acked: true)

        core.leftOnConnection("m1")
        core.set(RoomCore.left(Room(mediaId: "m1", mode: .live, fanclub: false, state: .joined, error: nil)), into: &effects)
        core.set(Room(mediaId: "m2", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        #expect(core.arrivalRoom?.mediaId == "m1", "before m2's join-room ack, what comes is m1's")
        _ = core.joinAcknowledged(mediaId: "m2", socketId: "s1", acked: true)
        #expect(core.arrivalRoom?.mediaId == "m2")
    }

    @Test func aJoinAckThatNeverComesStillEndsTheOldRoomsWindow() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Room(mediaId: "m1", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        _ = core.link(.connected(socketId: "s1"), now: Self.t0)
        core.leftOnConnection("m1")
        core.set(Room(mediaId: "m2", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        _ = core.joinAcknowledged(mediaId: "m2", socketId: "s1", acked: false)  // taken as joined after 5 s
        #expect(core.arrivalRoom?.mediaId == "m2")
    }

    @Test func aNewConnectionCarriesOnlyTheCurrentRoom() {
        var core = RoomCore()
        var effects: [RoomEffect] = []
        core.set(Room(mediaId: "m1", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        _ = core.link(.connected(socketId: "s1"), now: Self.t0)
        core.leftOnConnection("m1")
        core.set(Room(mediaId: "m2", mode: .live, fanclub: false, state: .joining, error: nil), into: &effects)
        _ = core.link(.connecting(attempt: 1), now: Self.t0)  // lost before the ack
        #expect(core.arrivalRoom == nil)
        _ = core.link(.connected(socketId: "s2"), now: Self.t0)
        #expect(core.arrivalRoom?.mediaId == "m2")
    }
}

