import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Restarts of either side and the store in the state directory.
@Suite struct StoreAndRestartTests {
    @Test func aRestartedBackendIsRejoinedOnceAndGetsThePendingAck() async throws {
        let live = try await LiveFixture(config: ["reconnect": ["baseMs": 50, "capMs": 200]])
        let overlayId = try await live.show(live.backend.quiz("tl-restart"), trackingId: "trk-restart").overlayId
        #expect(try await live.waitForAck("trk-restart", "received")["acked"] == true)
        try await live.waitForAcksDelivered()

        try await live.restartBackend {
            try await live.player.waitForEvent("connection.state") { $0["state"] == "reconnecting" }
            // Reported while the backend is away: the ack waits in the store.
            _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)])
            _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
            try await live.waitForPendingAcksStored(1)
        }
        try await live.player.waitForEvent("room.state", timeoutMs: 15_000) { $0["state"] == "joined" }
        #expect(try await live.waitForAck("trk-restart", "rendered")["status"] == "success")
        try await live.waitForAcksDelivered()
        #expect(try await live.backend.ackStages("trk-restart") == ["rendered"])
        let joins = try await live.backend.records("room-events", "type=join-room")
        #expect(joins.count == 1)
        #expect(joins.first?["payload"]?["mediaId"] == "m1")
        #expect(try await live.backend.records("handshakes", "accepted=true").count == 1)
        // The overlay stayed on screen through the outage.
        #expect(try await live.status()["overlays"]?.arrayValue?.first?["overlayId"] == .string(overlayId))
    }

    @Test func sessionsOpenWhenTheDaemonWasKilledAreCancelledAtTheNextStart() async throws {
        let backend = try await ReferenceBackend()
        let directory = try TemporaryDirectory()
        let deviceId: JSONValue?
        do {
            let first = try await LiveFixture(directory: directory, backend: backend)
            try await first.show(backend.quiz("tl-killed"), trackingId: "trk-killed")
            deviceId = try await first.waitForAck("trk-killed", "received")["deviceId"]
            try await first.waitForAcksDelivered()
            // Its session's row (what the restart closes) is written once it stayed open 50 ms.
            try await first.waitForTrackingStored()
            first.daemon.signal(SIGKILL)
            _ = try await first.daemon.waitForExit()
        }
        #expect(try await backend.records("acks", "trackingId=trk-killed&stage=rendered").isEmpty)

        let second = try await LiveFixture(directory: directory, backend: backend)
        let rendered = try await second.waitForAck("trk-killed", "rendered")
        #expect(rendered["status"] == "cancelled")
        #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "daemon_restart")
        #expect(rendered["deviceId"] == deviceId)
        try await second.waitForAcksDelivered()
        #expect(try await backend.ackStages("trk-killed") == ["received", "rendered"])
    }

    @Test func anAckStoredWhileTheBackendWasDownSurvivesAKill() async throws {
        let directory = try TemporaryDirectory()
        var port = 0
        do {
            let first = try await LiveFixture(config: ["reconnect": ["baseMs": 50, "capMs": 200]], directory: directory)
            port = first.backend.port
            let overlayId = try await first.show(first.backend.quiz("tl-stored"), trackingId: "trk-stored").overlayId
            try await first.waitForAck("trk-stored", "received")
            try await first.waitForAcksDelivered()
            try await first.backend.stop()
            try await first.player.waitForEvent("connection.state") { $0["state"] == "reconnecting" }
            _ = try await first.player.call("overlay.attached", ["overlayId": .string(overlayId)])
            _ = try await first.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
            try await first.waitForPendingAcksStored(1)
            first.daemon.signal(SIGKILL)
            _ = try await first.daemon.waitForExit()
        }
        let backend = try await ReferenceBackend.onPort(port)
        let second = try await LiveFixture(directory: directory, backend: backend)
        #expect(try await second.waitForAck("trk-stored", "rendered")["status"] == "success")
        try await second.waitForAcksDelivered()
        #expect(try await backend.ackStages("trk-stored") == ["rendered"])
    }

    @Test func anAnsweredTimelineStaysAnsweredAfterARestart() async throws {
        let backend = try await ReferenceBackend()
        let directory = try TemporaryDirectory()
        do {
            let first = try await LiveFixture(viewer: .alice, directory: directory, backend: backend)
            let overlayId = try await first.show(backend.quiz("tl-kept")).overlayId
            #expect(try await first.answer(overlayId)["status"] == "success")
            #expect(try await first.daemon.stop() == 0)
        }
        // Only the daemon's store knows it now.
        try await backend.admin("POST", "/_admin/answered", ["userId": "alice", "mediaId": "m1", "timelineIds": [], "replace": true])

        let second = try await LiveFixture(viewer: .alice, directory: directory, backend: backend)
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-kept"), trackingId: "trk-kept")
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-fresh"), trackingId: "trk-fresh")
        #expect(try await second.shownTimelines(until: "tl-fresh") == ["tl-fresh"])
        let cancelled = try await second.waitForAck("trk-kept", "rendered")
        #expect(cancelled["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "already_interacted")
    }

    @Test func aCorruptStoreIsMovedAsideAndAFreshOneStarted() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: state + "/interactived.sqlite"))

        let daemon = try await DaemonProcess(directory: directory)
        let client = try await daemon.client()
        let movedTo = try #require(try await client.call("daemon.status")["daemon"]?["store"]?["corruptMovedTo"]?.stringValue)
        #expect(movedTo.hasPrefix(state + "/interactived.sqlite.corrupt-"))
        #expect(FileManager.default.contents(atPath: movedTo) == garbage)
        let fresh = FileManager.default.contents(atPath: state + "/interactived.sqlite") ?? Data()
        #expect(fresh.starts(with: Data("SQLite format 3".utf8)))
        #expect(daemon.notify.messages.contains { $0.contains("READY=1") && $0.contains("damaged store") })
        // The fresh store works: a runtime setting is kept.
        _ = try await client.call("config.set", ["deviceClass": "tv"])
        #expect(try await client.call("config.get")["deviceClass"] == "tv")
    }
}
