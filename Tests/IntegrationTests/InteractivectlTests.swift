import Foundation
import IPCProtocol
import JSONValue
import Testing

/// interactivectl as a person or a script uses it: help, exit statuses, output modes, and the
/// room and player commands against the reference backend.
@Suite struct InteractivectlTests {
    static let commands = [
        "status", "events", "config get", "config set", "login", "logout", "call", "join", "leave", "overlays",
        "overlay loaded", "overlay failed", "overlay dismiss", "overlay answer", "confirm", "time", "predict open", "leaderboard",
    ]

    @Test(arguments: commands)
    func everyCommandHasHelp(_ command: String) throws {
        let result = try runCommand([BuiltProducts.ctl] + command.split(separator: " ").map(String.init) + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Usage: interactivectl \(command)"))
    }

    @Test func exitStatusesAreTheDocumentedOnes() throws {
        let general = try runCommand([BuiltProducts.ctl, "--help"])
        #expect(general.status == 0)
        #expect(general.stdout.contains("Exit status"))
        #expect(try runCommand([BuiltProducts.ctl, "frobnicate"]).status == 64)
        #expect(try runCommand([BuiltProducts.ctl, "status", "--bogus"]).status == 64)
        let unreachable = try runCommand([BuiltProducts.ctl, "--socket", "/tmp/no-such-daemon.sock", "status"])
        #expect(unreachable.status == 69)
        #expect(unreachable.stderr.contains("Is interactived running?"))
        let daemon = try DaemonProcess()
        #expect(try daemon.ctl(["call", "room.leave"]).status == 1)
        #expect(try daemon.ctl(["config", "set", "httpTimeoutMs", "soon"]).status == 64)
        let nobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        #expect(try daemon.ctl(["logout"], prefix: nobody).status == 77)
    }

    @Test func jsonForProgramsAndNoColourOffATerminal() throws {
        let daemon = try DaemonProcess()
        let json = try daemon.ctl(["--json", "status"])
        #expect(try JSONValue.parse(json.stdout)["session"]?["loggedIn"] == false)
        let human = try daemon.ctl(["status"])
        #expect(human.stdout.contains("Viewer    anonymous"))
        #expect(!human.stdout.contains("\u{1B}["))
        #expect(try daemon.ctl(["config", "set", "viewport", #"{"width":1280,"height":720}"#]).stdout == #"viewport = {"height":720,"width":1280}"# + "\n")
        #expect(try daemon.ctl(["config", "get", "viewport"]).stdout == #"{"height":720,"width":1280}"# + "\n")
    }

    @Test func loginReadsTheTokenFromStandardInputOrAFileNeverFromArguments() throws {
        let daemon = try DaemonProcess()
        let fromStdin = try daemon.ctl(["login", "--user-id", "alice", "--display-name", "Alice"], stdin: "secret-token\n")
        #expect(fromStdin.status == 0)
        #expect(try daemon.client().call("daemon.status")["session"]?["userId"] == "alice")
        let tokenFile = daemon.directory.path + "/token"
        try Data("file-token".utf8).write(to: URL(fileURLWithPath: tokenFile))
        #expect(try daemon.ctl(["login", "--user-id", "bob", "--token-file", tokenFile]).status == 0)
        #expect(try daemon.ctl(["login", "--user-id", "bob", "--token", "x"]).status == 64)
        #expect(try daemon.ctl(["login", "--user-id", "bob"], stdin: "").status == 64)
        #expect(try daemon.ctl(["logout"]).status == 0)
    }

    @Test func roomAndPlayerCommandsDriveALiveRoom() throws {
        let backend = try ReferenceBackend()
        let daemon = try DaemonProcess(arguments: backend.daemonFlags())
        let watcher = try daemon.client()
        try watcher.subscribe(["overlay.", "answer.", "room."])
        #expect(try daemon.ctl(["login", "--user-id", "alice"], stdin: "token-alice").status == 0)
        #expect(try daemon.ctl(["join", "m1"]).stdout == "m1: joined\n")
        try backend.emitOverlay(room: "m1", backend.quiz("tl1", extra: ["requireBet": true, "betAmount": 20]))
        let overlayId = try #require(try watcher.waitForEvent("overlay.show").data["overlayId"]?.stringValue)
        #expect(try daemon.ctl(["overlays"]).stdout.contains(overlayId))
        #expect(try daemon.ctl(["overlay", "loaded", overlayId]).status == 0)
        try watcher.waitForEvent("overlay.reveal")
        #expect(try daemon.ctl(["overlay", "answer", overlayId, #"{"choice":"A"}"#]).status == 0)
        try watcher.waitForEvent("answer.confirm")
        #expect(try daemon.ctl(["confirm", overlayId, "yes"]).stdout == "Bet accepted\n")
        #expect(try watcher.waitForEvent("answer.result").data["status"] == "success")
        // Reports from interactivectl never make it the overlay's owner: the overlay stays.
        #expect(try watcher.call("daemon.status")["overlays"]?.arrayValue?.count == 1)
        #expect(try daemon.ctl(["overlay", "dismiss", overlayId]).status == 0)
        #expect(try watcher.waitForEvent("overlay.hide").data["reason"] == "dismissed")
        #expect(try daemon.ctl(["leave"]).stdout == "Left m1\n")
    }

    @Test func vodCommands() throws {
        let backend = try ReferenceBackend()
        try backend.admin("PUT", "/_admin/scenario/v1", VODTests.scenario(backend))
        let daemon = try DaemonProcess(arguments: backend.daemonFlags())
        let watcher = try daemon.client()
        try watcher.subscribe(["overlay.show"])
        #expect(try daemon.ctl(["join", "v1", "--vod"]).stdout == "v1: joined\n")
        #expect(try daemon.ctl(["time", "0.5"]).status == 0)
        #expect(try watcher.waitForEvent("overlay.show").data["timelineId"] == "t0")
        #expect(try daemon.ctl(["time", "-1"]).status == 64)
    }

    @Test func eventsCommandPrintsHeldEventsAndFilters() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.call("config.set", ["deviceClass": "tv"])
        _ = try client.call("session.login", ["token": "t", "userId": "u"])
        let all = try daemon.ctl(["events"])
        #expect(all.stdout.contains("config.changed deviceClass=tv"))
        #expect(all.stdout.contains("session.state"))
        let filtered = try daemon.ctl(["--json", "events", "--type", "session."])
        let lines = filtered.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(try JSONValue.parse(String(lines[0]))["type"] == "session.state")
    }
}

/// The shipped unit files.
@Suite struct SystemdUnitTests {
    @Test func serviceExposureIsAtMostTwo() throws {
        let unit = BuiltProducts.packageRoot.appendingPathComponent("systemd/interactived.service").path
        let result = try runCommand(["/usr/bin/systemd-analyze", "security", "--offline=true", "--no-pager", unit])
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        #expect(score <= 2.0, "\(line)")
    }

    /// The kernel, not only the daemon's own bounds, caps what a flood can make it hold.
    @Test func serviceMemoryIsCapped() throws {
        let unit = BuiltProducts.packageRoot.appendingPathComponent("systemd/interactived.service").path
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let settings = text.split(separator: "\n").filter { $0.hasPrefix("MemoryMax=") || $0.hasPrefix("MemoryHigh=") }
        #expect(settings == ["MemoryHigh=48M", "MemoryMax=64M"])
    }
}
