import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify, signals, socket activation, journald and configuration handling of the real binary.
@Suite struct SystemdTests {
    @Test func notifiesReadyStatusReloadingAndStopping() async throws {
        let daemon = try await DaemonProcess()
        let ready = try await daemon.notify.waitFor("READY=1")
        #expect(ready.contains("STATUS=No room"))
        let mark = daemon.notify.messages.count
        daemon.signal(SIGHUP)
        let reloading = try await daemon.notify.waitFor("RELOADING=1", since: mark)
        // MONOTONIC_USEC: CLOCK_MONOTONIC in µs, which the service manager compares with its own.
        let usec = reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") }.flatMap { UInt64($0.dropFirst(15)) }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowUsec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec / 1000)
        #expect(usec.map { $0 <= nowUsec && nowUsec - $0 < 10_000_000 } == true, "MONOTONIC_USEC in \(reloading)")
        // Back to the state line once the file is applied.
        #expect(try await daemon.notify.waitFor("READY=1", since: mark).contains("STATUS=No room"))
        #expect(try await daemon.stop() == 0)
        try await daemon.notify.waitFor("STOPPING=1")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func watchdogPingsAtHalfTheInterval() async throws {
        let daemon = try await DaemonProcess(environment: ["WATCHDOG_USEC": "400000"])
        try await daemon.notify.waitFor("WATCHDOG=1", timeoutMs: 3000)
    }

    @Test func invalidConfigurationAtStartExits78NamingTheKey() async throws {
        let daemon = try await DaemonProcess(config: ["tenant": "t", "httpTimeoutMs": "soon"], waitReady: false)
        #expect(try await daemon.waitForExit() == 78)
        #expect(try await daemon.waitForLog("httpTimeoutMs"))
        let unknown = try await DaemonProcess(config: ["tenent": "t"], waitReady: false)
        #expect(try await unknown.waitForExit() == 78)
        #expect(try await unknown.waitForLog("tenent"))
    }

    @Test func sighupReloadsTheFileAndKeepsTheOldOneWhenInvalid() async throws {
        let daemon = try await DaemonProcess(config: ["tenant": "first"])
        let client = try await daemon.client()
        _ = try await client.call("events.subscribe", ["types": ["config."]])
        let configURL = URL(fileURLWithPath: daemon.directory.path + "/config.json")
        try Data(#"{"tenant":"second"}"#.utf8).write(to: configURL)
        daemon.signal(SIGHUP)
        let changed = try #require(try await client.nextEvent(timeoutMs: 5000))
        #expect(changed.type == "config.changed")
        #expect(changed.data["tenant"] == "second")
        try Data(#"{"tenant": 5}"#.utf8).write(to: configURL)
        daemon.signal(SIGHUP)
        try await daemon.notify.waitFor("configuration file rejected: invalid value for 'tenant'")
        #expect(try await client.call("config.get")["tenant"] == "second")
    }

    @Test func runtimeConfigurationPersistsAndFlagsWin() async throws {
        let directory = try TemporaryDirectory()
        do {
            let daemon = try await DaemonProcess(directory: directory)
            _ = try await daemon.client().call("config.set", ["tenant": "kept", "os": "linuxstb", "reconnect": ["capMs": 9000]])
            #expect(try await daemon.stop() == 0)
        }
        let again = try await DaemonProcess(arguments: ["--os", "fromflag"], directory: directory)
        let config = try await again.client().call("config.get")
        #expect(config["tenant"] == "kept")
        #expect(config["os"] == "fromflag")
        #expect(config["reconnect"] == ["baseMs": 500, "capMs": 9000, "factor": 2])
        // null drops the runtime value.
        let dropped = try await again.client().call("config.set", ["tenant": nil])
        #expect(dropped["tenant"] == .null)
        await #expect(throws: IPCClientError.self) { try await again.client().call("config.set", ["stateDirectory": "/x"]) }
        await #expect(throws: IPCClientError.self) { try await again.client().call("config.set", ["environment": "moon"]) }
    }

    @Test func socketActivation() async throws {
        let directory = try TemporaryDirectory()
        let socketPath = directory.path + "/activated.sock"
        let notify = try NotifySocket(directory: directory.path)
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        activator.arguments = ["-l", socketPath, "--setenv=NOTIFY_SOCKET=\(notify.path)",
                               BuiltProducts.daemon, "--state-directory", directory.path + "/state",
                               "--log-target", "stderr", "--config", directory.path + "/none.json"]
        activator.standardError = FileHandle.nullDevice
        try activator.run()
        // No wait in the defer (it cannot suspend): Foundation reaps the child.
        defer { activator.terminate() }
        // systemd-socket-activate creates the socket before exec'ing anything: wait for it.
        var client: DaemonConnection?
        _ = try await eventually(timeoutMs: 10_000) {
            client = try? await DaemonConnection.connect(path: socketPath)
            return client != nil
        }
        let connected = try #require(client)
        let status = try await connected.call("daemon.status", timeoutMs: 10_000)
        #expect(status["daemon"]?["socket"]?["activated"] == true)
        try await notify.waitFor("READY=1")
    }

    @Test func journaldGetsStructuredFieldsAndNoSecrets() async throws {
        let journal = try await Journald.ensureRunning()
        _ = journal
        let start = Date()
        let daemon = try await DaemonProcess(arguments: ["--log-target", "journal"])
        let client = try await daemon.client()
        let bootId = try #require(try await client.call("daemon.hello", ["client": "j", "protocol": 1])["bootId"]?.stringValue)
        let secret = "tok-\(UUID().uuidString)"
        _ = try await client.call("session.login", ["token": .string(secret), "userId": "journal-user", "displayName": "J"])
        try await client.send(raw: [UInt8](repeating: UInt8(ascii: "y"), count: (1 << 20) + 10) + [0x0A])
        _ = try await client.nextLine(timeoutMs: 5000)
        #expect(try await daemon.stop() == 0)

        let entries = try await Journald.entries(matching: "SYSLOG_IDENTIFIER=interactived", since: start, until: { entries in
            entries.contains { $0["MESSAGE"]?.stringValue?.hasPrefix("Stopping") == true && $0["_PID"]?.stringValue == String(daemon.process.processIdentifier) }
        })
        let ours = entries.filter { $0["_PID"]?.stringValue == String(daemon.process.processIdentifier) }
        let started = try #require(ours.first { $0["INTERACTIVE_BOOT_ID"]?.stringValue == bootId })
        #expect(started["PRIORITY"] == "5")
        #expect(started["MESSAGE_ID"]?.stringValue?.count == 32)
        #expect(ours.contains { $0["INTERACTIVE_USER_ID"] == "journal-user" })
        #expect(ours.contains { $0["INTERACTIVE_CLIENT_PID"]?.stringValue == String(getpid()) && $0["PRIORITY"] == "4" })
        #expect(!ours.contains { $0.jsonText.contains(secret) })
    }
}

extension SystemdTests {
    /// Ids in the text, answer results, runtime configuration and permission denials with the
    /// client's uid and pid, read back from the journal; and `journalctl -x` explaining them from
    /// the message catalog.
    @Test func theJournalExplains() async throws {
        _ = try await Journald.ensureRunning()
        let start = Date()
        let fixture = try await LiveFixture(viewer: .alice, arguments: ["--log-target", "journal"])
        let pid = String(fixture.daemon.process.processIdentifier)
        let overlayId = try await fixture.showLoaded(fixture.backend.quiz("quiz-journal"))
        #expect(try await fixture.answer(overlayId)["status"] == "success")
        _ = try await fixture.player.call("config.set", ["leaderboardUrl": "https://board.example/lb"])
        let nobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        #expect(try await fixture.daemon.ctl(["config", "set", "tenant", "x"], prefix: nobody).status == 77)
        #expect(try await fixture.daemon.stop() == 0)

        let ours = try await Journald.entries(matching: "_PID=\(pid)", since: start) { entries in
            entries.contains { $0["MESSAGE"]?.stringValue?.hasPrefix("Stopping") == true }
        }
        // MESSAGE_IDs (docs/journal.md): the tests run the binaries, they do not link the daemon.
        let overlayShown = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0a", answerResult = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0e"
        let configSetId = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a0f", permissionDenied = "5d2c8a0e6f1b4f0c9a3e7b2d1c4f6a11"
        func entry(_ id: String) throws -> JSONValue {
            let found = ours.first { $0["MESSAGE_ID"]?.stringValue == id }
            return try #require(found, "no entry with MESSAGE_ID \(id)")
        }
        let shown = try entry(overlayShown)
        #expect(shown["MESSAGE"] == .string("Overlay \(overlayId) shown (quiz-journal, media m1)"))
        #expect(shown["INTERACTIVE_OVERLAY_ID"] == .string(overlayId))
        let answer = try entry(answerResult)
        #expect(answer["MESSAGE"] == .string("Answer for \(overlayId) accepted (quiz-journal, media m1)"))
        #expect(answer["INTERACTIVE_ANSWER_STATUS"] == "success")
        let configSet = try entry(configSetId)
        #expect(configSet["INTERACTIVE_CLIENT_UID"] == .string(String(getuid())))
        #expect(configSet["INTERACTIVE_CLIENT_PID"] == .string(String(getpid())))
        #expect(configSet["MESSAGE"]?.stringValue?.contains(#"leaderboardUrl="https://board.example/lb""#) == true)
        let denied = try entry(permissionDenied)
        #expect(denied["INTERACTIVE_CLIENT_UID"] == "65534")
        #expect(denied["INTERACTIVE_METHOD"] == "config.set")
        #expect(denied["PRIORITY"] == "4")
        #expect(denied["MESSAGE"]?.stringValue?.hasPrefix("Permission denied: uid 65534 pid ") == true)

        // journalctl -x reads the catalog database at /var/lib/systemd/catalog: one built from the
        // repository's catalog (journalctl --root) is mounted there in a mount namespace of its own,
        // so the machine's catalog stays as it is.
        let root = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: root.path + "/usr/lib/systemd/catalog", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: BuiltProducts.packageRoot.path + "/systemd/interactived.catalog",
                                         toPath: root.path + "/usr/lib/systemd/catalog/interactived.catalog")
        #expect(try await runCommand(["/usr/bin/journalctl", "--root=\(root.path)", "--update-catalog"]).status == 0)
        let explained = try await runCommand([
            "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount --bind \"$0\" /var/lib/systemd/catalog && exec journalctl --no-pager -x _PID=\(pid) MESSAGE_ID=\(configSetId)",
            root.path + "/var/lib/systemd/catalog",
        ])
        #expect(explained.status == 0, "\(explained.stderr)")
        #expect(explained.stdout.contains("Subject: The runtime configuration was changed"))
        #expect(explained.stdout.contains("uid \(getuid()), pid \(getpid())"))
    }
}

/// A systemd-journald of the test's own (systemd is not PID 1 here).
enum Journald {
    static let socket = "/run/systemd/journal/socket"

    /// Starts /lib/systemd/systemd-journald unless one already listens.
    static func ensureRunning() async throws -> Process? {
        if (try? await runCommand(["/usr/bin/pgrep", "-x", "systemd-journal"]))?.status == 0,
           FileManager.default.fileExists(atPath: socket) {
            return nil
        }
        let journald = Process()
        journald.executableURL = URL(fileURLWithPath: "/lib/systemd/systemd-journald")
        journald.standardError = FileHandle.nullDevice
        journald.standardOutput = FileHandle.nullDevice
        try journald.run()
        guard try await eventually(timeoutMs: 10_000, { FileManager.default.fileExists(atPath: socket) }) else {
            throw TestFailure("systemd-journald did not create \(socket)")
        }
        return journald
    }

    /// Journal entries matching `match`, polled (bounded) until `until` holds.
    /// The entries matching `match` written since `start` (a match on `_PID` alone would also find
    /// an earlier process's: the journal outlives test runs, and process ids are reused), once
    /// `until` holds for them; bounded.
    static func entries(matching match: String, since start: Date, until: ([JSONValue]) -> Bool) async throws -> [JSONValue] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        let startMicroseconds = UInt64(start.timeIntervalSince1970 * 1_000_000)
        while true {
            let result = try await runCommand(["/usr/bin/journalctl", "--no-pager", "-o", "json", match])
            let entries = result.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(String($0)) }.filter {
                ($0["__REALTIME_TIMESTAMP"]?.stringValue).flatMap { UInt64($0) }.map { $0 >= startMicroseconds } ?? false
            }
            if until(entries) { return entries }
            guard clock.now < deadline else { throw TestFailure("journal entries never matched; got \(entries.count)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
