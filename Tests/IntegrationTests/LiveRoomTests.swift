import Foundation
import IPCProtocol
import JSONValue
import Testing

/// Live rooms against the reference backend: lifecycle, reconnection, session changes.
@Suite struct LiveRoomTests {
    @Test func joinsAfterConnectWithTheHandshakeHeaders() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        try await player.subscribe(["room.", "connection."])
        _ = try await player.call("session.login", ["token": "token-alice", "userId": "alice", "displayName": "Alice"])
        let joined = try await player.call("room.join", ["mediaId": "m1", "mode": "live"])
        #expect(joined["state"] == "joined")
        #expect(try await player.waitForEvent("room.state") { $0["state"] == "joining" }.data["mediaId"] == "m1")
        try await player.waitForEvent("connection.state") { $0["state"] == "connected" }
        try await player.waitForEvent("room.state") { $0["state"] == "joined" }

        let handshake = try await #require(try backend.records("handshakes").last)
        #expect(handshake["tenant"] == "onlivev2")
        #expect(handshake["os"] == "linuxstb")
        #expect(handshake["authorization"] == "Bearer token-alice")
        #expect(handshake["auth"]?["token"] == "token-alice")
        let joins = try await backend.records("room-events", "type=join-room")
        #expect(joins.count == 1)
        #expect(joins.first?["payload"] == ["mediaId": "m1", "userId": "alice", "displayName": "Alice", "os": "linuxstb"])
        #expect(joins.first?["sid"] == handshake["sid"])
    }

    @Test func anonymousViewerJoinsAndSameMediaIsANoOp() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        #expect(try await player.call("room.join", ["mediaId": "m1"])["state"] == "joined")
        let handshake = try await #require(try backend.records("handshakes").last)
        #expect(handshake["accepted"] == true)
        #expect(handshake["authorization"] == nil || handshake["authorization"] == .null)
        #expect(handshake["userId"] == nil || handshake["userId"] == .null)
        #expect(try await player.call("room.join", ["mediaId": "m1", "fanclub": true])["state"] == "joined")
        #expect(try await player.call("daemon.status")["room"]?["fanclub"] == true)
        #expect(try await backend.records("room-events", "type=join-room").count == 1)
        #expect(try await backend.records("handshakes").count == 1)
    }

    @Test func anotherMediaLeavesTheOldRoomOnTheSameConnection() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("room.join", ["mediaId": "m1"])
        try await player.subscribe(["overlay."])
        try await backend.emitOverlay(room: "m1", backend.quiz("tl1"))
        let shown = try await player.waitForEvent("overlay.show")
        _ = try await player.call("room.join", ["mediaId": "m2"])
        let hidden = try await player.waitForEvent("overlay.hide")
        #expect(hidden.data["overlayId"] == shown.data["overlayId"])
        #expect(hidden.data["reason"] == "remove_all_view")
        let events = try await backend.waitForRecords("room-events") { items in items.filter { $0["type"] == "join-room" }.count == 2 }
        #expect(events.map { $0["type"] } == ["join-room", "leave-room", "join-room"])
        #expect(Set(events.compactMap { $0["sid"] }).count == 1)
        #expect(events[1]["payload"]?["mediaId"] == "m1")
    }

    @Test func missingConfigurationNamesTheKeys() async throws {
        let daemon = try await DaemonProcess(arguments: ["--tenant", "t"])
        do {
            _ = try await daemon.client().call("room.join", ["mediaId": "m1"])
            Issue.record("room.join without configuration succeeded")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.NotConfigured")
            #expect(error.data?["missing"] == ["os", "socketUrl", "apiUrl"])
        }
    }

    @Test func loginReconnectsWithTheNewTokenAndJoinsAgain() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("room.join", ["mediaId": "m1"])
        try await player.subscribe(["room."])
        _ = try await player.call("session.login", ["token": "token-bob", "userId": "bob", "displayName": "Bob"])
        try await player.waitForEvent("room.state") { $0["state"] == "joined" }
        let handshakes = try await backend.waitForRecords("handshakes") { $0.count == 2 }
        #expect(handshakes[1]["authorization"] == "Bearer token-bob")
        let joins = try await backend.waitForRecords("room-events", "type=join-room") { $0.count == 2 }
        #expect(joins[1]["payload"]?["userId"] == "bob")
        #expect(joins[1]["sid"] == handshakes[1]["sid"])
        #expect(try await backend.admin("GET", "/_admin/sockets")["items"]?.arrayValue?.count ?? -1 <= 1)
    }

    @Test func transportLossReconnectsAndRejoinsKeepingOverlays() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("config.set", ["reconnect": ["baseMs": 50, "capMs": 200]])
        _ = try await player.call("room.join", ["mediaId": "m1"])
        try await player.subscribe(["room.", "overlay.", "connection."])
        try await backend.emitOverlay(room: "m1", backend.quiz("tl1"))
        try await player.waitForEvent("overlay.show")
        try await backend.fault(["dropSockets": true])
        try await player.waitForEvent("room.state") { $0["state"] == "joining" }
        try await player.waitForEvent("connection.state") { $0["state"] == "reconnecting" }
        try await player.waitForEvent("room.state") { $0["state"] == "joined" }
        #expect(try await player.call("daemon.status")["overlays"]?.arrayValue?.count == 1)
        let joins = try await backend.waitForRecords("room-events", "type=join-room") { $0.count == 2 }
        #expect(joins[0]["sid"] != joins[1]["sid"])
    }

    @Test func refusedConnectionIsBackendRefusedUntilANewLogin() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("session.login", ["token": "not-a-token", "userId": "x"])
        do {
            _ = try await player.call("room.join", ["mediaId": "m1"])
            Issue.record("joined with a bad token")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.BackendRefused")
        }
        #expect(try await player.call("daemon.status")["room"]?["state"] == "error")
        try await player.subscribe(["room."])
        _ = try await player.call("session.login", ["token": "token-alice", "userId": "alice"])
        try await player.waitForEvent("room.state") { $0["state"] == "joined" }
    }

    @Test func leaveHidesOverlaysAndSaysLeaveRoom() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("room.join", ["mediaId": "m1"])
        try await player.subscribe(["overlay.", "room."])
        try await backend.emitOverlay(room: "m1", backend.quiz("tl1"))
        try await player.waitForEvent("overlay.show")
        #expect(try await player.call("room.leave")["state"] == "left")
        #expect(try await player.waitForEvent("overlay.hide").data["reason"] == "remove_all_view")
        try await player.waitForEvent("room.state") { $0["state"] == "left" }
        try await backend.waitForRecords("room-events", "type=leave-room") { $0.count == 1 }
        await #expect(throws: IPCClientError.self) { try await player.call("room.leave") }
    }
}

/// `interactive.status` is per viewer.
@Suite struct InteractiveStatusTests {
    @Test func needsALoginThenReturnsTheBackendsAnswer() async throws {
        let backend = try await ReferenceBackend()
        try await backend.admin("POST", "/_admin/answered", ["userId": "alice", "mediaId": "m1", "timelineIds": ["tl1", "tl7"]])
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let client = try await daemon.client()
        do {
            _ = try await client.call("interactive.status", ["mediaId": "m1"])
            Issue.record("interactive.status without login succeeded")
        } catch IPCClientError.rpc(let error) {
            #expect(error.name == "interactive.NotLoggedIn")
        }
        _ = try await client.call("session.login", ["token": "token-alice", "userId": "alice"])
        #expect(try await client.call("interactive.status", ["mediaId": "m1"])["answered"] == ["tl1", "tl7"])
    }
}

/// room.join's timeout, an unacknowledged join-room, and leaving on shutdown.
@Suite struct LiveJoinTimingTests {
    @Test func joinReturnsJoiningAfterTimeoutWhileTheDaemonKeepsTrying() async throws {
        let backend = try await ReferenceBackend()
        try await backend.fault(["refuseConnections": "transport"])
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        _ = try await player.call("config.set", ["reconnect": ["baseMs": 50, "capMs": 200]])
        try await player.subscribe(["room.", "connection."])
        #expect(try await player.call("room.join", ["mediaId": "m1", "timeoutMs": 300])["state"] == "joining")
        try await player.waitForEvent("connection.state") { $0["state"] == "reconnecting" }
        try await backend.fault(["refuseConnections": false])
        try await player.waitForEvent("room.state") { $0["state"] == "joined" }
    }

    @Test func unacknowledgedJoinRoomIsTakenAsJoinedAfterFiveSeconds() async throws {
        let backend = try await ReferenceBackend()
        try await backend.fault(["ackJoinRoom": false])
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let player = try await daemon.client()
        let started = Date()
        #expect(try await player.call("room.join", ["mediaId": "m1"])["state"] == "joined")
        #expect(Date().timeIntervalSince(started) >= 4.5)
        #expect(try await daemon.waitForLog("did not ack join-room"))
    }

    @Test func gracefulStopLeavesTheRoom() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        _ = try await daemon.client().call("room.join", ["mediaId": "m1"])
        #expect(try await daemon.stop() == 0)
        try await backend.waitForRecords("room-events", "type=leave-room") { $0.count == 1 }
        try await daemon.notify.waitFor("STOPPING=1")
    }
}

/// Where the daemon's work runs: the display path at normal priority, bookkeeping below it.
@Suite struct ThreadPriorityTests {
    /// Name → nice value of each thread of `pid` (from /proc/PID/task/TID/stat, field 19).
    private func threads(of pid: Int32) throws -> [String: Int] {
        var result: [String: Int] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let stat = try String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8)
            guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let name = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the name: state is field 3 of stat, so nice (field 19) is the 17th here.
            guard fields.count > 16, let nice = Int(fields[16]) else { continue }
            result[name] = nice
        }
        return result
    }

    @Test func bookkeepingRunsBelowTheDisplayPath() async throws {
        let live = try await LiveFixture()
        _ = try await live.show(live.backend.quiz("tl-threads"), trackingId: "trk-threads")
        try await live.waitForAck("trk-threads", "received")
        let niceByName = try threads(of: live.daemon.process.processIdentifier)
        #expect(niceByName["interactived.bk"] == 10)
        #expect(niceByName["interactived.ev"] == 0)
        #expect(niceByName["interactived.io"] == nil, "the local API runs on the event loop, not a reactor of its own")
    }

    /// Context switches so far of each thread that is neither the event loop nor the bookkeeping
    /// thread nor the main thread: the cooperative pool's and Dispatch's (from
    /// /proc/PID/task/TID/status), by thread id. A thread that ends while it is read is left out.
    private func poolSwitches(of pid: Int32) throws -> [String: Int] {
        var switches: [String: Int] = [:]
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") where tid != "\(pid)" {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { continue }
            let fields = Dictionary(status.split(separator: "\n").compactMap { line -> (String, String)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }, uniquingKeysWith: { first, _ in first })
            guard let name = fields["Name"], name != "interactived.ev", name != "interactived.bk" else { continue }
            switches[tid] = (Int(fields["voluntary_ctxt_switches"] ?? "") ?? 0) + (Int(fields["nonvoluntary_ctxt_switches"] ?? "") ?? 0)
        }
        return switches
    }

    /// The display path is isolated to the loop actor: a backend event, its overlay and its
    /// tracking never pass through a thread of the cooperative pool (each pass costs two thread
    /// hand-offs; an unstructured task that did not prefer the loop made about three per overlay,
    /// and the IPC writer parked in a nonisolated async function about one).
    @Test func overlaysReachPlayersWithoutWakingThePool() async throws {
        let live = try await LiveFixture()
        let pid = live.daemon.process.processIdentifier
        _ = try await live.show(live.backend.quiz("tl-pool-warm"), trackingId: "trk-pool-warm")
        try await live.waitForAcksDelivered()
        let before = try poolSwitches(of: pid)
        let overlays = 40
        for number in 0..<overlays {
            _ = try await live.show(live.backend.quiz("tl-pool-\(number)"), trackingId: "trk-pool-\(number)")
        }
        try await live.waitForAcksDelivered()
        // Per thread: a thread that started meanwhile counts whole; one that ended is left out
        // (an idle worker's end must not hide another's switches).
        let switches = try poolSwitches(of: pid).reduce(0) { total, thread in total + thread.value - (before[thread.key] ?? 0) }
        #expect(switches < overlays / 2, "\(switches) context switches of the pool's threads for \(overlays) overlays")
    }
}
