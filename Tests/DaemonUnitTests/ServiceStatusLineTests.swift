import Foundation
import JSONValue
import Runtime
import RuntimeTesting
import Testing
@testable import InteractiveDaemon

@Suite @LoopActor struct ServiceStatusLineTests {
    @Test func idleDaemon() {
        #expect(ServiceStatusLine.compose(["room": nil, "connection": ["state": "idle"], "overlays": []]) == "No room")
    }

    @Test func liveRoomWithTheConnectionAndOverlays() {
        let room: JSONValue = ["mediaId": "m1", "mode": "live", "state": "joined", "error": nil]
        var board: JSONObject = ["room": room, "connection": ["state": "connected"],
                                          "overlays": [["overlayId": "ov-1a-1"]]]
        #expect(ServiceStatusLine.compose(board) == "Room m1 (live) joined; backend connected; overlay ov-1a-1 on screen")
        board["overlays"] = [["overlayId": "ov-1a-1"], ["overlayId": "ov-1a-2"]]
        board["connection"] = ["state": "reconnecting", "attempt": 3]
        #expect(ServiceStatusLine.compose(board) == "Room m1 (live) joined; backend reconnecting (attempt 3); 2 overlays on screen")
    }

    @Test func whatAnOperatorMustActOn() {
        let board: JSONObject = [
            "room": ["mediaId": "m1", "mode": "live", "state": "error", "error": ["name": "x", "message": "refused\nby server"]],
            "connection": ["state": "disconnected"],
            "daemon": ["restartNeeded": ["maxClients", "privilegedGroup"], "configError": "invalid value for 'tenant'"],
            "store": StoreHealth(path: "/var/lib/interactived/s", persistent: true, movedAside: "/var/lib/interactived/s.corrupt-1",
                                 problem: .full).json,
        ]
        #expect(ServiceStatusLine.compose(board) == "Room m1 (live) error: refused by server; backend disconnected; "
                + "restart needed to apply maxClients, privilegedGroup; configuration file rejected: invalid value for 'tenant'; "
                + "damaged store moved to /var/lib/interactived/s.corrupt-1; state directory full, writes are retried")
    }

    @Test func longValuesAreCut() {
        let long = String(repeating: "x", count: 500)
        #expect(ServiceStatusLine.clean(long).count == ServiceStatusLine.valueLimit)
        #expect(ServiceStatusLine.clean(String(repeating: "x", count: ServiceStatusLine.valueLimit)).count == ServiceStatusLine.valueLimit)
    }

    @Test func controlCharactersBecomeSpaces() {
        #expect(ServiceStatusLine.clean("ov-1 plain") == "ov-1 plain")
        #expect(ServiceStatusLine.clean("a\nb\tc\u{7F}d") == "a b c d")
        #expect(ServiceStatusLine.clean("café\u{85}x") == "café x")
    }

    @Test func theBusTellsEachChangeOfTheLineOnceAndAtMostOnceASecond() async {
        let timers = ManualScheduler()
        let bus = EventBus(bootId: "b", timers: timers)
        let lines = LineRecorder()
        bus.onStatusLineChange { lines.append($0) }
        let room: JSONValue = ["mediaId": "m1", "mode": "vod", "state": "joining"]
        bus.publish("room.state", room, section: "room", status: room)
        await endOfLoopTurn()
        #expect(lines.all == ["Room m1 (vod) joining"], "a first change is told at the end of its turn")
        bus.publish("room.state", room, section: "room", status: room)
        bus.setStatus("session", ["loggedIn": true])
        bus.setStatusMember("daemon", "restartNeeded", ["maxClients"])
        await endOfLoopTurn()
        timers.advance(by: .milliseconds(999))
        #expect(lines.all.count == 1, "the next waits for the interval")
        timers.advance(by: .milliseconds(1))
        #expect(lines.all == ["Room m1 (vod) joining", "Room m1 (vod) joining; restart needed to apply maxClients"])
        // A change after a quiet interval is told at the end of its turn again.
        timers.advance(by: .seconds(2))
        let joined: JSONValue = ["mediaId": "m1", "mode": "vod", "state": "joined"]
        bus.publish("room.state", joined, section: "room", status: joined)
        await endOfLoopTurn()
        #expect(lines.all.last == "Room m1 (vod) joined; restart needed to apply maxClients")
        #expect(lines.all.count == 3)
        #expect(bus.statusLine == "Room m1 (vod) joined; restart needed to apply maxClients")
    }
}

/// Returns once the work the event loop had queued before it ran (the bus tells its line then).
private func endOfLoopTurn() async {
    await withCheckedContinuation { continuation in EventLoop.shared.execute { continuation.resume() } }
}

/// Collects what a sink was given (the bus calls it at the end of the loop's turn: `endOfLoopTurn`).
private final class LineRecorder: @unchecked Sendable {
    private var lines: [String] = []
    private let lock = NSLock()

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
