import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The behaviour bugs of the fidelity audit (issue 12), each against the reference backend.
@Suite struct AuditFixesTests {
    private func predictOverlay(_ backend: ReferenceBackend, _ timelineId: String, type: Int = 3,
                                targets: [String] = ["all"]) -> JSONValue {
        ["timelineId": .string(timelineId), "typeTimeline": .number(Double(type)),
         "url": .string("\(backend.baseURL)/templates/predict.html?id=\(timelineId)"),
         "position": ["alignment": 4, "width": 60, "height": 60], "duration": 0,
         "targets": .array(targets.map(JSONValue.string))]
    }

    /// An overlay still on its way (waiting for the interactive status) when the viewer changes
    /// media belongs to the room it arrived in: it is not shown in the next one.
    @Test func aLiveOverlayArrivingDuringAMediaChangeStaysInItsRoom() async throws {
        let backend = try await ReferenceBackend()
        // The interactive status requested at the join takes 2 s: overlays that arrive wait for it.
        try await backend.fault(["restDelayMs": 2000])
        let live = try await LiveFixture(viewer: .alice, backend: backend)
        try await backend.emitOverlay(room: "m1", backend.quiz("tl-old", extra: ["traceLock": true]), trackingId: "trk-old")
        // It reached the daemon (receive-message goes out on arrival).
        try await backend.waitForRecords("receive-messages", "trackingId=trk-old") { !$0.isEmpty }
        #expect(try await live.player.call("room.join", ["mediaId": "m2"])["state"] == "joined")

        let rendered = try await live.waitForAck("trk-old", "rendered", timeoutMs: 15_000)
        #expect(rendered["status"] == "cancelled")
        #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "remove_all_view")
        try await live.player.expectNoEvent("overlay.show", withinMs: 300)
        #expect(try await live.status()["overlays"] == [])
        #expect(try await backend.records("actions").isEmpty)
    }

    @Test(arguments: [3, 5])
    func predictAndLuckyOverlaysAreFilteredByTargetsAndAnswers(_ type: Int) async throws {
        let live = try await LiveFixture(viewer: .alice, events: ["predict.", "overlay.", "answer."])
        let backend = live.backend
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p-ios", type: type, targets: ["ios"]), trackingId: "trk-ios")
        let offTarget = try await live.waitForAck("trk-ios", "rendered")
        #expect(offTarget["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "not_targeted")

        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p-ok", type: type), trackingId: "trk-ok")
        let button = try await live.player.waitForEvent("predict.button")
        #expect(button.data["timelineId"] == "p-ok", "the button of an overlay for another platform was shown")
        let overlayId = try await live.player.call("predict.open", ["timelineId": "p-ok"])["overlayId"]?.stringValue ?? ""
        #expect(try await live.answer(overlayId)["status"] == "success")

        // Sent again: answered already, so neither button nor dialog again.
        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p-ok", type: type), trackingId: "trk-again")
        let again = try await live.waitForAck("trk-again", "rendered")
        #expect(again["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "already_interacted")
        #expect(try await live.status()["predict"]?.arrayValue?.map { $0["timelineId"] } == ["p-ok"])
    }

    @Test func theControlsComeBackOnlyWhenTheLastRevealedOverlayLeaves() async throws {
        let live = try await LiveFixture(viewer: .alice, events: ["predict.", "overlay.", "player."])
        let backend = live.backend
        let quizId = try await live.show(backend.quiz("tl-quiz")).overlayId
        try await live.bridge(quizId, ["type": "INTERACTIVE_SHOW_ANALYTICS"])
        #expect(try await live.player.waitForEvent("player.controls").data["visible"] == false)

        try await backend.emitOverlay(room: "m1", predictOverlay(backend, "p-dialog"), trackingId: "trk-dialog")
        try await live.player.waitForEvent("predict.button")
        let dialogId = try await live.player.call("predict.open", ["timelineId": "p-dialog"])["overlayId"]?.stringValue ?? ""
        try await live.bridge(dialogId, ["type": "INTERACTIVE_OPEN_ANALYTICS"])
        try await live.player.waitForEvent("overlay.reveal") { $0["overlayId"] == .string(dialogId) }

        // The quiz leaves; the dialog still covers the video: the controls stay hidden.
        _ = try await live.player.call("overlay.dismiss", ["overlayId": .string(quizId)])
        try await live.player.waitForEvent("overlay.hide") { $0["overlayId"] == .string(quizId) }
        try await live.player.expectNoEvent("player.controls", withinMs: 400) { $0["visible"] == true }

        _ = try await live.player.call("overlay.dismiss", ["overlayId": .string(dialogId)])
        #expect(try await live.player.waitForEvent("player.controls").data["visible"] == true)
    }

    @Test func aTraceLockOverlayWithoutATrackingIdSendsReceiveMessage() async throws {
        let live = try await LiveFixture()
        try await live.show(live.backend.quiz("tl-locked", extra: ["traceLock": true]))
        let sent = try await live.backend.waitForRecords("receive-messages") { items in
            items.contains { $0["timelineId"] == "tl-locked" }
        }
        let message = try #require(sent.first { $0["timelineId"] == "tl-locked" })
        #expect(message["mediaId"] == "m1")
        #expect(message["socketId"] == .string(try await live.socketId()))
        #expect(message["payload"]?["trackingId"] == .null)
    }

    @Test func aBetConfirmationNobodyAnswersIsDeclinedInTime() async throws {
        let live = try await LiveFixture(viewer: .alice, config: ["answerConfirmTimeoutMs": 500])
        let overlayId = try await live.show(live.backend.quiz("tl-wait", extra: ["requireBet": true, "betAmount": 5])).overlayId
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
        #expect(try await live.player.waitForEvent("answer.confirm").data["timeoutMs"] == 500)
        let started = Date()
        let result = try await live.player.waitForEvent("answer.result", timeoutMs: 5000).data
        #expect(result["status"] == "failure")
        #expect(result["reason"] == "bet_declined")
        #expect(result["detail"] == "timeout")
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(try await backend(live).records("actions").isEmpty)
        // Too late now.
        await #expect(throws: IPCClientError.self) {
            try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        }
        // And the viewer may try again.
        try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
        try await live.player.waitForEvent("answer.confirm")
        _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
        #expect(try await live.player.waitForEvent("answer.result").data["status"] == "success")
    }

    private func backend(_ live: LiveFixture) -> ReferenceBackend { live.backend }

    /// A reply sent the moment `answer.confirm` arrives is taken (it used to race the daemon's
    /// own registration of the confirmation: "no bet confirmation is pending").
    @Test func aConfirmationAnsweredAtOnceIsTaken() async throws {
        let live = try await LiveFixture(viewer: .alice)
        for round in 1...5 {
            let overlayId = try await live.show(live.backend.quiz("tl-fast-\(round)", extra: ["requireBet": true, "betAmount": 1])).overlayId
            try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
            try await live.player.waitForEvent("answer.confirm")
            _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": false])
            #expect(try await live.player.waitForEvent("answer.result").data["reason"] == "bet_declined")
            // A retry right after the result is a new attempt, not "already_answered".
            try await live.bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": ["answer": ["choice": "A"]]])
            try await live.player.waitForEvent("answer.confirm")
            _ = try await live.player.call("answer.confirm", ["overlayId": .string(overlayId), "accept": true])
            #expect(try await live.player.waitForEvent("answer.result").data["status"] == "success")
        }
    }

    // MARK: Restart recovery

    @Test func theViewerAndTheRoomAreJoinedAgainAfterACrash() async throws {
        let backend = try await ReferenceBackend()
        let directory = try TemporaryDirectory()
        let firstBoot: JSONValue?
        do {
            let first = try await LiveFixture(viewer: .alice, fanclub: true, directory: directory, backend: backend)
            firstBoot = try await first.status()["bootId"]
            first.daemon.signal(SIGKILL)
            _ = try await first.daemon.waitForExit()
        }
        var info = stat()
        #expect(stat(directory.path + "/state/interactived.sqlite", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)

        let second = try await DaemonProcess(arguments: backend.daemonFlags(), directory: directory)
        let client = try await second.client()
        let status = try await waitForRoom(client, "joined")
        #expect(status["bootId"] != firstBoot)
        #expect(status["session"] == ["loggedIn": true, "userId": "alice", "displayName": "Alice", "expired": false])
        #expect(status["room"]?["mediaId"] == "m1")
        #expect(status["room"]?["fanclub"] == true)
        // The restored viewer may ask for play tickets.
        let started = try await client.call("playback.start", ["filmId": "f1", "episodeNo": 1,
                                                         "device": ["unionInfo": "union-1", "drmKek": "kek-1"]])
        #expect(started["state"] == "loading" || started["state"] == "playing")
        let joins = try await backend.records("room-events", "type=join-room")
        #expect(joins.count == 2)
        #expect(joins.last?["payload"]?["userId"] == "alice")
        #expect(try await backend.records("handshakes", "accepted=true").last?["authorization"] == "Bearer token-alice")
        #expect(!second.stderr.contains("token-alice"))

        // Logging out forgets the viewer; leaving forgets the room.
        _ = try await client.call("session.logout")
        #expect(try await second.stop() == 0)
        let third = try await DaemonProcess(arguments: backend.daemonFlags(), directory: directory)
        let anonymous = try await waitForRoom(try await third.client(), "joined")
        #expect(anonymous["session"]?["loggedIn"] == false)
        _ = try await third.client().call("room.leave")
        #expect(try await third.stop() == 0)
        // The kept room (if any) is restored before the daemon serves its first client.
        let fourth = try await DaemonProcess(arguments: backend.daemonFlags(), directory: directory)
        #expect(try await fourth.client().call("daemon.status")["room"] == .null)
    }

    private func waitForRoom(_ client: DaemonConnection, _ state: String, timeoutMs: Int = 10_000) async throws -> JSONValue {
        var status: JSONValue = .null
        guard try await eventually(timeoutMs: timeoutMs, everyMs: 50, {
            status = try await client.call("daemon.status")
            return status["room"]?["state"] == .string(state)
        }) else { throw TestFailure("room never \(state): \(status["room"] ?? .null)") }
        return status
    }

    // MARK: The store

    @Test func aStateDirectoryThatIsAFileStopsTheDaemonWithAPlainMessage() async throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.path + "/state", contents: Data("x".utf8)))
        let daemon = try await DaemonProcess(directory: directory, waitReady: false)
        #expect(try await daemon.waitForExit() == 73)
        #expect(try await daemon.waitForLog("is a file, not a directory"))
        #expect(!daemon.stderr.contains("CocoaError"))
    }

    /// A store file the daemon's user cannot read (root reads everything, so the daemon runs as
    /// nobody here) is moved aside and a fresh one started.
    @Test(.enabled(if: geteuid() == 0)) func anUnreadableStoreIsMovedAside() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        let store = state + "/interactived.sqlite"
        #expect(FileManager.default.createFile(atPath: store, contents: Data("SQLite format 3\u{0}".utf8)))
        for path in [state, store] { #expect(chown(path, 65534, 65534) == 0) }
        chmod(store, 0)
        let result = try await runCommand(["/usr/bin/timeout", "2", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                     BuiltProducts.daemon, "--socket", state + "/d.sock", "--state-directory", state,
                                     "--log-target", "stderr", "--config", directory.path + "/none.json"])
        #expect(result.status == 124, "the daemon did not keep running: \(result.stderr)")
        #expect(result.stderr.contains("cannot be read and written"))
        let moved = try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.hasPrefix("interactived.sqlite.corrupt-") }
        #expect(moved.count == 1)
        let fresh = FileManager.default.contents(atPath: store) ?? Data()
        #expect(fresh.starts(with: Data("SQLite format 3".utf8)))
    }

    @Test(.enabled(if: geteuid() == 0)) func aReadOnlyStateDirectoryIsReported() async throws {
        let directory = try TemporaryDirectory()
        let state = directory.path + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        guard (try? await runCommand(["/bin/mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", state]))?.status == 0 else {
            Issue.record("cannot mount a read-only tmpfs")
            return
        }
        // Unmounted on every way out (a defer cannot await).
        let unmount = { _ = try? await runCommand(["/bin/umount", "-l", state]) }
        do {
            let daemon = try await DaemonProcess(directory: directory)
            #expect(daemon.notify.messages.contains { $0.contains("READY=1") && $0.contains("read-only") })
            let client = try await daemon.client()
            let store = try await client.call("daemon.status")["store"]
            #expect(store?["persistent"] == false)
            #expect(store?["problem"] == "read-only")
            // The daemon works; what is set is in force (but not kept).
            _ = try await client.call("config.set", ["deviceClass": "tv"])
            #expect(try await client.call("config.get")["deviceClass"] == "tv")
            #expect(try await daemon.waitForLog("not writable"))
        } catch {
            await unmount()
            throw error
        }
        await unmount()
    }
}
