import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `--check-config`, `daemon.reload` / `interactivectl reload`, start-only keys, `config.get`
/// origins, and a `STATUS=` that follows the daemon's state, on the real binaries.
@Suite struct ConfigReloadTests {
    private static let asNobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func checkConfigValidatesWithoutTouchingASocketOrTheStore() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/config.json"
        let state = directory.path + "/state"
        let socket = directory.path + "/d.sock"
        let common = [BuiltProducts.daemon, "--state-directory", state, "--socket", socket, "--log-target", "stderr"]
        try write(#"{"tenant":"t","httpTimeoutMs":2000}"#, to: file)
        let valid = try await runCommand(common + ["--check-config", file])
        #expect(valid.status == 0)
        #expect(valid.stdout.contains("\(file): valid"))
        try write(#"{"tenant":"t","httpTimeoutMs":"soon"}"#, to: file)
        let invalid = try await runCommand(common + ["--config", file, "--check-config"])
        #expect(invalid.status == 78)
        #expect(invalid.stderr.contains("'httpTimeoutMs'"))
        #expect(invalid.stderr.contains("whole number"))
        let inline = try await runCommand(common + ["--check-config=\(file)"])
        #expect(inline.status == 78)
        try write(#"{"tenant":"t"}"#, to: file)
        // A flag is checked too.
        let badFlag = try await runCommand(common + ["--check-config", file, "--environment", "moon"])
        #expect(badFlag.status == 78)
        #expect(badFlag.stderr.contains("'environment'"))
        let missing = try await runCommand(common + ["--check-config", directory.path + "/absent.json"])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("no such file"))
        #expect(!FileManager.default.fileExists(atPath: state))
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test func reloadRepliesOnceTheFileIsAppliedOrRefused() async throws {
        let daemon = try await DaemonProcess(config: ["tenant": "first"])
        let configPath = daemon.directory.path + "/config.json"
        let client = try await daemon.client()
        try write(#"{"tenant":"second","os":"linuxstb"}"#, to: configPath)
        let mark = daemon.notify.messages.count
        let applied = try await daemon.ctl(["reload"])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.contains("changed os, tenant"))
        // The reply came after the file was applied: no waiting needed.
        #expect(try await client.call("config.get")["tenant"] == "second")
        #expect(try await daemon.notify.waitFor("RELOADING=1", since: mark).contains("MONOTONIC_USEC="))
        #expect(try await daemon.notify.waitFor("READY=1", since: mark).contains("STATUS=No room"))

        try write(#"{"tenant": 5}"#, to: configPath)
        let refused = try await daemon.ctl(["reload"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'tenant'"))
        #expect(refused.stderr.contains("interactive.ConfigRejected"))
        #expect(try await client.call("config.get")["tenant"] == "second")
        let thrown = await #expect(throws: IPCClientError.self) { try await client.call("daemon.reload") }
        guard case .rpc(let error)? = thrown else {
            Issue.record("daemon.reload: \(String(describing: thrown))")
            return
        }
        #expect(error.name == "interactive.ConfigRejected")
        #expect(error.data?["key"] == "tenant")
        #expect(try await client.call("daemon.status")["daemon"]?["configError"]?.stringValue?.contains("'tenant'") == true)
        try await daemon.notify.waitFor("configuration file rejected: invalid value for 'tenant'")
        // Only the control role may reload.
        #expect(try await daemon.ctl(["reload"], prefix: Self.asNobody).status == 77)
        // A good file again clears the refusal.
        try write(#"{"tenant":"third"}"#, to: configPath)
        #expect(try await daemon.ctl(["--json", "reload"]).stdout.contains(#""changed":["os","tenant"]"#))
        #expect(try await client.call("daemon.status")["daemon"]?["configError"] == .null)
    }

    @Test func aServiceManagerThatStopsReadingNeverBlocksTheDaemon() async throws {
        // The test's notify socket is read only while a test waits on it: its queue (10 datagrams
        // with the default net.unix.max_dgram_qlen) fills after a few reloads.
        let daemon = try await DaemonProcess(config: ["tenant": "t"])
        let client = try await daemon.client()
        for round in 0..<20 {
            #expect(try await client.call("daemon.reload", timeoutMs: 5000)["file"] != nil, "reload \(round)")
        }
        #expect(try await client.call("daemon.status", timeoutMs: 5000)["daemon"] != nil)
        #expect(try await daemon.stop(timeoutMs: 10_000) == 0)
    }

    @Test func startOnlyKeysKeepTheRunningValueAndSayARestartIsNeeded() async throws {
        let daemon = try await DaemonProcess(config: ["maxClients": 50, "privilegedGroup": "interactive", "tenant": "t"])
        let configPath = daemon.directory.path + "/config.json"
        try write(#"{"maxClients":2,"privilegedGroup":"nosuchgroup","tenant":"u"}"#, to: configPath)
        let client = try await daemon.client()
        let reloaded = try await client.call("daemon.reload")
        #expect(reloaded["changed"] == ["tenant"])
        #expect(reloaded["restartNeeded"] == ["maxClients", "privilegedGroup"])
        let config = try await client.call("config.get")
        #expect(config["maxClients"] == 50)
        #expect(config["privilegedGroup"] == "interactive")
        #expect(config["tenant"] == "u")
        let origins = try await client.call("config.get", ["origin": true])
        #expect(origins["maxClients"] == ["value": 50, "origin": "file", "pending": 2])
        #expect(origins["tenant"] == ["value": "u", "origin": "file"])
        #expect(origins["stateDirectory"]?["origin"] == "flag")
        #expect(origins["httpTimeoutMs"] == ["value": 10000, "origin": "default"])
        #expect(origins["caFile"] == ["value": nil, "origin": "unset"])
        #expect(try await client.call("daemon.status")["daemon"]?["restartNeeded"] == ["maxClients", "privilegedGroup"])
        try await daemon.notify.waitFor("restart needed to apply maxClients, privilegedGroup")
        #expect(try await daemon.waitForLog("maxClients changed to 2"))
        // The running limit is still 50: more than 2 clients are served.
        let more = try await daemon.clients(4)
        for extra in more { #expect(try await extra.call("daemon.hello")["daemon"] == "interactived") }
        let text = try await daemon.ctl(["config", "get", "--origin"])
        #expect(text.stdout.contains("50  (file; 2 after a restart)"))
        #expect(text.stdout.contains("u  (file)"))
        #expect(try await daemon.ctl(["config", "get", "tenant", "--origin"]).stdout == "u  (file)\n")
    }

    @Test func statusFollowsTheRoomTheConnectionAndTheOverlaysAndComesBackAfterAReload() async throws {
        let fixture = try await LiveFixture()
        let notify = fixture.daemon.notify
        try await notify.waitFor("STATUS=Room m1 (live) joined; backend connected")
        let overlayId = try await fixture.show(fixture.backend.quiz("quiz-status")).overlayId
        try await notify.waitFor("STATUS=Room m1 (live) joined; backend connected; overlay \(overlayId) on screen")
        let mark = notify.messages.count
        fixture.daemon.signal(SIGHUP)
        let ready = try await notify.waitFor("READY=1", since: mark)
        #expect(ready.contains("STATUS=Room m1 (live) joined; backend connected; overlay \(overlayId) on screen"))

        // An outage: the status says so, the log says it once, and when it is back and for how long.
        try await fixture.restartBackend {
            // Several attempts fail before the backend is back. The line is told at most every
            // 500 ms, so it may skip an attempt: any from the third on.
            try await notify.waitFor("backend reconnecting (attempt 3 or later)", since: mark, timeoutMs: 15_000) { message in
                guard let range = message.range(of: "backend reconnecting (attempt ") else { return false }
                return Int(message[range.upperBound...].prefix { $0.isNumber }).map { $0 >= 3 } ?? false
            }
        }
        try await notify.waitFor("STATUS=Room m1 (live) joined; backend connected; overlay \(overlayId) on screen",
                           since: notify.messages.count, timeoutMs: 15_000)
        #expect(try await fixture.daemon.waitForLog("Backend connection back after"))
        let log = fixture.daemon.stderr
        #expect(log.components(separatedBy: "Backend connection lost").count - 1 == 1, "\(log)")
        #expect(!log.contains("Socket.IO: connection failed"))
        _ = try await fixture.player.call("room.leave")
        try await notify.waitFor("STATUS=Room m1 (live) left", since: mark)
    }
}
