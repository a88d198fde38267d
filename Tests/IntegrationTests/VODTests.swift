import Foundation
import IPCProtocol
import JSONValue
import Testing

/// VOD rooms: the scenario over REST and overlays on the player's clock (issue 6).
@Suite struct VODTests {
    /// A scenario with every time format, out of order, with an inactive and malformed timelines.
    static func scenario(_ backend: ReferenceBackend) -> JSONValue {
        func timeline(_ id: String, _ time: String, status: String = "ACTIVE", type: Int = 1) -> JSONValue {
            ["timelineId": .string(id), "time": .string(time), "showStatus": .string(status), "typeTimeline": .number(Double(type)),
             "url": .string("\(backend.baseURL)/templates/quiz.html?id=\(id)"),
             "position": ["alignment": 2, "width": 30, "height": 20], "duration": 0, "targets": ["all"]]
        }
        return ["timelines": [
            timeline("t10", "00:10.5"), timeline("t0", "0"), timeline("t5", "5"), timeline("t62", "1:02"),
            timeline("t3610", "01:00:10"), timeline("inactive", "00:03", status: "INACTIVE"),
            timeline("bad1", "xx"), timeline("bad2", "1:99"), timeline("t20", "20"),
        ]]
    }

    /// A daemon in a VOD room, with a subscribed player. Keep it in a variable: the daemon stops
    /// when it is released.
    struct Room {
        let daemon: DaemonProcess
        let player: DaemonConnection
    }

    private func vodRoom(_ backend: ReferenceBackend, media: String = "v1") async throws -> Room {
        try await backend.admin("PUT", "/_admin/scenario/\(media)", VODTests.scenario(backend))
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        try await player.subscribe(["overlay.show", "room."])
        #expect(try await player.call("room.join", ["mediaId": .string(media), "mode": "vod"])["state"] == "joined")
        return Room(daemon: daemon, player: player)
    }

    /// Sends the reports, then collects the timelines shown until `expected` many arrived.
    private func shown(_ room: Room, after reports: [Double], expecting expected: Int) async throws -> [String] {
        let timelines = try await shown(room.player, after: reports, expecting: expected)
        withExtendedLifetime(room.daemon) {}
        return timelines
    }

    private func shown(_ player: DaemonConnection, after reports: [Double], expecting expected: Int) async throws -> [String] {
        for seconds in reports { try await player.notify("player.time", ["seconds": .number(seconds)]) }
        var timelines: [String] = []
        while timelines.count < expected {
            timelines.append(try await player.waitForEvent("overlay.show").data["timelineId"]?.stringValue ?? "?")
        }
        // Every report was handled before this reply: nothing more can be on its way.
        _ = try await player.call("daemon.status")
        try await player.expectNoEvent("overlay.show", withinMs: 200)
        return timelines
    }

    @Test func loadsActiveTimelinesAndSkipsMalformedTimesByName() async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        #expect(try await backend.records("rest-log").contains { $0["path"] == "/api/ctc/scenario/v2/vod/v1/linuxstb" })
        #expect(try await room.daemon.waitForLog("bad1"))
        #expect(try await room.daemon.waitForLog("bad2"))
        // Out-of-order scenario, played in time order; the inactive one never fires.
        #expect(try await shown(room, after: Array(stride(from: 0.0, through: 25, by: 1)), expecting: 4) == ["t0", "t5", "t10", "t20"])
    }

    @Test(arguments: [0.25, 0.7, 1.0])
    func regularReportsMissNothingAndRepeatNothing(step: Double) async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        let reports = Array(stride(from: 0.0, through: 63, by: step))
        #expect(try await shown(room, after: reports, expecting: 5) == ["t0", "t5", "t10", "t20", "t62"])
    }

    @Test func irregularStepsWithinFiveSecondsMissNothing() async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        let reports = [0.3, 1.9, 4.2, 4.99, 5.01, 9.7, 10.49, 10.51, 14.0, 18.9, 20.0, 20.0, 23.3]
        #expect(try await shown(room, after: reports, expecting: 4) == ["t0", "t5", "t10", "t20"])
    }

    @Test func timelineAtZeroFiresOnAFirstReportOfFiveSecondsOrLess() async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        #expect(try await shown(room, after: [5.0], expecting: 2) == ["t0", "t5"])

        let late = try await vodRoom(backend, media: "v2")
        #expect(try await shown(late, after: [7.0], expecting: 0) == [])
    }

    @Test func forwardAndBackwardSeeksFireNothingPassedOverNorAgain() async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        let player = room.player
        #expect(try await shown(player, after: [0, 1, 2], expecting: 1) == ["t0"])
        // Forward seek past t5 and t10, landing exactly on t20: nothing fires.
        #expect(try await shown(player, after: [20], expecting: 0) == [])
        #expect(try await shown(player, after: [21, 24], expecting: 0) == [])
        // Backward seek, then playing through t5 and t10 again: they were not shown yet, so they fire.
        #expect(try await shown(player, after: [3, 4, 6, 8, 11], expecting: 2) == ["t5", "t10"])
        // Backward again: everything here was shown, nothing fires twice.
        #expect(try await shown(player, after: [0, 2, 4, 6, 8, 10, 12], expecting: 0) == [])
        // Ahead to 1:00:05 then playing on: t3610 fires.
        #expect(try await shown(room, after: [3605, 3608, 3611], expecting: 1) == ["t3610"])
    }

    @Test func scenarioErrorsAreClearAndTheJoinMayBeRetried() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        try await player.subscribe(["room."])
        #expect(try await joinError(player, "missing") == "interactive.ScenarioUnavailable")
        #expect(try await player.waitForEvent("room.state") { $0["state"] == "error" }.data["error"]?["name"] == "interactive.ScenarioUnavailable")

        try await backend.admin("PUT", "/_admin/scenario/shape", ["no": "timelines"])
        #expect(try await joinError(player, "shape") == "interactive.ScenarioUnavailable")

        try await backend.admin("PUT", "/_admin/scenario/v1", VODTests.scenario(backend))
        try await backend.fault(["restFail": 503])
        #expect(try await joinError(player, "v1") == "interactive.BackendUnreachable")
        try await backend.fault(["restFail": nil, "restDelayMs": 1500])
        _ = try await player.call("config.set", ["httpTimeoutMs": 300])
        #expect(try await joinError(player, "v1") == "interactive.BackendUnreachable")
        try await backend.fault(["restDelayMs": 0])
        #expect(try await player.call("room.join", ["mediaId": "v1", "mode": "vod"])["state"] == "joined")
    }

    private func joinError(_ player: DaemonConnection, _ media: String) async throws -> String? {
        do {
            _ = try await player.call("room.join", ["mediaId": .string(media), "mode": "vod"])
            return nil
        } catch IPCClientError.rpc(let error) {
            return error.name
        }
    }

    @Test func switchingBetweenLiveAndVODRooms() async throws {
        let backend = try await ReferenceBackend()
        try await backend.admin("PUT", "/_admin/scenario/v1", VODTests.scenario(backend))
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        try await player.subscribe(["overlay.", "room."])
        _ = try await player.call("room.join", ["mediaId": "m1"])
        try await backend.emitOverlay(room: "m1", backend.quiz("live1"))
        try await player.waitForEvent("overlay.show")
        _ = try await player.call("room.join", ["mediaId": "v1", "mode": "vod"])
        #expect(try await player.waitForEvent("overlay.hide").data["reason"] == "remove_all_view")
        try await backend.waitForRecords("room-events", "type=leave-room") { $0.count == 1 }
        try await backend.waitForRecords("handshakes") { $0.first?["disconnectedAt"].map { !$0.isNull } ?? false }
        #expect(try await player.call("daemon.status")["connection"]?["state"] == "idle")
        #expect(try await shown(player, after: [0], expecting: 1) == ["t0"])
        _ = try await player.call("room.join", ["mediaId": "m1"])
        #expect(try await player.waitForEvent("overlay.hide").data["reason"] == "remove_all_view")
        try await backend.waitForRecords("handshakes") { $0.count == 2 }
        try await player.notify("player.time", ["seconds": 5])
        _ = try await player.call("daemon.status")
        try await player.expectNoEvent("overlay.show", withinMs: 200)
    }

    @Test func answersInVODGoToTheAPIWithModeVODAndNoTracking() async throws {
        let backend = try await ReferenceBackend()
        let room = try await vodRoom(backend)
        let player = room.player
        _ = try await player.call("session.login", ["token": "token-alice", "userId": "alice"])
        try await player.subscribe(["overlay.show", "answer."])
        try await player.notify("player.time", ["seconds": 1])
        let overlayId = try #require(try await player.waitForEvent("overlay.show").data["overlayId"])
        _ = try await player.call("overlay.attached", ["overlayId": overlayId])
        _ = try await player.call("overlay.rendered", ["overlayId": overlayId, "status": "loaded"])
        _ = try await player.call("overlay.bridge", ["overlayId": overlayId,
                                               "message": #"{"type":"INTERACTIVE_ACTION_REPORT","data":{"choice":"B"}}"#])
        #expect(try await player.waitForEvent("answer.result").data["status"] == "success")
        let action = try await #require(try backend.records("actions").last)
        #expect(action["body"]?["mode"] == "vod")
        #expect(action["body"]?["socketId"] == .null)
        #expect(action["body"]?["timelineId"] == "t0")
        #expect(action["body"]?["answer"] == ["choice": "B"])
        #expect(try await backend.records("acks").isEmpty)
        withExtendedLifetime(room.daemon) {}
    }
}
