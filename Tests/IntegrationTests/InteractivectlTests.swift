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
        "completion",
    ]

    @Test(arguments: commands)
    func everyCommandHasHelp(_ command: String) async throws {
        let result = try await runCommand([BuiltProducts.ctl] + command.split(separator: " ").map(String.init) + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Usage: interactivectl \(command)"))
    }

    @Test(arguments: ["config", "overlay", "predict"])
    func groupsListTheirSubcommands(_ group: String) async throws {
        let help = try await runCommand([BuiltProducts.ctl, group, "--help"])
        #expect(help.status == 0)
        let members = Self.commands.filter { $0.hasPrefix(group + " ") }
        #expect(!members.isEmpty)
        for member in members { #expect(help.stdout.contains(member), "\(member) missing from:\n\(help.stdout)") }
        let bare = try await runCommand([BuiltProducts.ctl, group])
        #expect(bare.status == 64)
        for member in members { #expect(bare.stderr.contains(member)) }
    }

    @Test func helpIsWrappedToTheWidthAndNeverCut() async throws {
        let environment = ProcessInfo.processInfo.environment
        func words(_ text: String) -> [Substring] { text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }
        for command in [["--help"], ["events", "--help"], ["login", "--help"], ["config", "--help"]] {
            var narrow = environment
            narrow["COLUMNS"] = "50"
            var wide = environment
            wide["COLUMNS"] = "400"
            let short = try await runCommand([BuiltProducts.ctl] + command, environment: narrow).stdout
            let long = try await runCommand([BuiltProducts.ctl] + command, environment: wide).stdout
            for line in short.split(separator: "\n") {
                // Only a single word longer than the width may stick out.
                #expect(line.count <= 50 || !line.trimmingCharacters(in: .whitespaces).contains(" "), "\(command): \(line)")
            }
            #expect(words(short) == words(long), "\(command): the narrow help lost words")
        }
        // Without $COLUMNS and off a terminal: 80.
        var plain = environment
        plain.removeValue(forKey: "COLUMNS")
        let general = try await runCommand([BuiltProducts.ctl, "--help"], environment: plain).stdout
        #expect(general.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(general.split(separator: "\n").contains { $0.count > 70 })
        // On a terminal: its width (TIOCGWINSZ), whatever $COLUMNS says.
        let onTerminal = try await Pty.run([BuiltProducts.ctl, "--help"], columns: 60, environment: ["COLUMNS": "200"])
        let lines = onTerminal.output.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 60 || !$0.trimmingCharacters(in: .whitespaces).contains(" ") }, "\(onTerminal.output)")
        #expect(lines.contains { $0.count > 50 })
    }

    @Test func exitStatusesAreTheDocumentedOnes() async throws {
        let general = try await runCommand([BuiltProducts.ctl, "--help"])
        #expect(general.status == 0)
        #expect(general.stdout.contains("Exit status"))
        #expect(try await runCommand([BuiltProducts.ctl, "frobnicate"]).status == 64)
        #expect(try await runCommand([BuiltProducts.ctl, "help", "nosuch"]).status == 64)
        #expect(try await runCommand([BuiltProducts.ctl]).status == 64)
        #expect(try await runCommand([BuiltProducts.ctl, "status", "--bogus"]).status == 64)
        let unreachable = try await runCommand([BuiltProducts.ctl, "--socket", "/tmp/no-such-daemon.sock", "status"])
        #expect(unreachable.status == 69)
        #expect(unreachable.stderr.contains("Is interactived running?"))
        // No socket known at all (no flag, no $INTERACTIVED_SOCKET, no $XDG_RUNTIME_DIR): 69 with the hint too.
        var bare = ProcessInfo.processInfo.environment
        for name in ["INTERACTIVED_SOCKET", "XDG_RUNTIME_DIR"] { bare.removeValue(forKey: name) }
        if !FileManager.default.fileExists(atPath: SocketPath.system) {
            let unknown = try await runCommand([BuiltProducts.ctl, "status"], environment: bare)
            #expect(unknown.status == 69)
            #expect(unknown.stderr.contains("no daemon socket found"))
            #expect(unknown.stderr.contains("Is interactived running?"))
        }
        let daemon = try await DaemonProcess()
        let noRoom = try await daemon.ctl(["call", "room.leave"])
        #expect(noRoom.status == 1)
        #expect(!noRoom.stderr.contains("Try"))
        let badValue = try await daemon.ctl(["config", "set", "httpTimeoutMs", "soon"])
        #expect(badValue.status == 64)
        #expect(badValue.stderr.contains("httpTimeoutMs"))
        #expect(try await daemon.ctl(["time", "-1"]).status == 64)
        let nobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        #expect(try await daemon.ctl(["logout"], prefix: nobody).status == 77)
    }

    @Test func jsonForProgramsAndNoColourOffATerminal() async throws {
        let daemon = try await DaemonProcess()
        let json = try await daemon.ctl(["--json", "status"])
        #expect(try JSONValue.parse(json.stdout)["session"]?["loggedIn"] == false)
        let human = try await daemon.ctl(["status"])
        #expect(human.stdout.contains("Viewer    anonymous"))
        #expect(!human.stdout.contains("\u{1B}["))
        #expect(try await daemon.ctl(["config", "set", "viewport", #"{"width":1280,"height":720}"#]).stdout == #"viewport = {"height":720,"width":1280}"# + "\n")
        #expect(try await daemon.ctl(["config", "get", "viewport"]).stdout == #"{"height":720,"width":1280}"# + "\n")
        // Errors are one JSON object on standard error, standard output stays empty.
        let error = try await daemon.ctl(["--json", "leave"])
        #expect(error.status == 1)
        #expect(error.stdout.isEmpty)
        let object = try JSONValue.parse(error.stderr)
        #expect(object["error"]?["exitStatus"] == 1)
        #expect(object["error"]?["daemonError"]?["data"]?["name"] == "interactive.NoRoom")
        let usage = try await daemon.ctl(["--json", "join"])
        #expect(usage.status == 64)
        #expect(try JSONValue.parse(String(usage.stderr.split(separator: "\n")[0]))["error"]?["message"] == "missing MEDIA")
        let unreachable = try await runCommand([BuiltProducts.ctl, "--json", "--socket", "/tmp/no-such-daemon.sock", "status"])
        #expect(try JSONValue.parse(unreachable.stderr)["error"]?["exitStatus"] == 69)
    }

    @Test func configSetOfAKeyAFlagSetsSaysWhichFlagWins() async throws {
        let daemon = try await DaemonProcess(arguments: ["--socket-url", "ws://127.0.0.1:9/"])
        let refused = try await daemon.ctl(["config", "set", "socketUrl", "ws://127.0.0.1:10/"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("--socket-url"))
        #expect(!refused.stderr.contains("Try"))
        #expect(try await daemon.ctl(["config", "get", "socketUrl"]).stdout == "ws://127.0.0.1:9/\n")
        do {
            _ = try await daemon.client().call("config.set", ["socketUrl": "ws://127.0.0.1:10/"])
            Issue.record("config.set of a flag's key succeeded")
        } catch IPCClientError.rpc(let error) {
            #expect(error.code == RPCErrorCode.invalidParams)
            #expect(error.data?["overriddenBy"] == "flag")
            #expect(error.data?["flag"] == "--socket-url")
        }
        // Keys no flag sets still change.
        #expect(try await daemon.ctl(["config", "set", "apiUrl", "http://127.0.0.1:10/"]).status == 0)
    }

    @Test func loginReadsTheTokenFromStandardInputOrAFileNeverFromArguments() async throws {
        let daemon = try await DaemonProcess()
        let fromStdin = try await daemon.ctl(["login", "--user-id", "alice", "--display-name", "Alice"], stdin: "secret-token\n")
        #expect(fromStdin.status == 0)
        // No room: nothing checked the token yet, and login says so.
        #expect(fromStdin.stdout.contains("not checked yet"))
        #expect(try await daemon.client().call("daemon.status")["session"]?["userId"] == "alice")
        let tokenFile = daemon.directory.path + "/token"
        try Data("file-token".utf8).write(to: URL(fileURLWithPath: tokenFile))
        #expect(try await daemon.ctl(["login", "--user-id", "bob", "--token-file", tokenFile]).status == 0)
        #expect(try await daemon.ctl(["login", "--user-id", "bob", "--token", "x"]).status == 64)
        #expect(try await daemon.ctl(["login", "--user-id", "bob"], stdin: "").status == 64)
        #expect(try await daemon.ctl(["logout"]).status == 0)
    }

    @Test func tokenPromptOnATerminalDoesNotEcho() async throws {
        let daemon = try await DaemonProcess()
        let session = try await Pty.run([BuiltProducts.ctl, "--socket", daemon.socketPath, "login", "--user-id", "alice"],
                                  input: "secret-pty-token\r", after: "(input hidden)")
        #expect(session.status == 0, "\(session.output)")
        #expect(session.output.contains("Token (input hidden):"))
        #expect(!session.output.contains("secret-pty-token"))
        #expect(try await daemon.client().call("daemon.status")["session"]?["userId"] == "alice")
    }

    @Test func loginInALiveRoomSaysWhatTheBackendAnswered() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        #expect(try await daemon.ctl(["join", "m1"]).stdout == "m1: joined\n")
        let refused = try await daemon.ctl(["login", "--user-id", "mallory"], stdin: "not-a-token")
        #expect(refused.status == 1)
        #expect(!refused.stdout.contains("Logged in"))
        #expect(refused.stderr.contains("refused"))
        // The room is in error: leave says it left it, not that no room is joined.
        #expect(try await daemon.client().call("daemon.status")["room"]?["state"] == "error")
        let left = try await daemon.ctl(["leave"])
        #expect(left.status == 0)
        #expect(left.stdout == "Left m1\n")
        #expect(try await daemon.client().call("daemon.status")["room"]?["state"] == "left")
        #expect(try await daemon.ctl(["leave"]).status == 1)
        #expect(try await daemon.ctl(["join", "m1"]).status == 1) // still the refused token
        let accepted = try await daemon.ctl(["login", "--user-id", "alice"], stdin: "token-alice")
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdout.contains("accepted"))
        let json = try await daemon.ctl(["--json", "login", "--user-id", "alice"], stdin: "token-alice")
        #expect(try JSONValue.parse(json.stdout)["token"] == "accepted")
    }

    @Test func roomAndPlayerCommandsDriveALiveRoom() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let watcher = try await daemon.client()
        try await watcher.subscribe(["overlay.", "answer.", "room."])
        #expect(try await daemon.ctl(["login", "--user-id", "alice"], stdin: "token-alice").status == 0)
        #expect(try await daemon.ctl(["join", "m1"]).stdout == "m1: joined\n")
        try await backend.emitOverlay(room: "m1", backend.quiz("tl1", extra: ["requireBet": true, "betAmount": 20]))
        let overlayId = try #require(try await watcher.waitForEvent("overlay.show").data["overlayId"]?.stringValue)
        #expect(try await daemon.ctl(["overlays"]).stdout.contains(overlayId))
        let loaded = try await daemon.ctl(["--json", "overlay", "loaded", overlayId])
        #expect(loaded.status == 0)
        #expect(try JSONValue.parse(loaded.stdout)["recorded"] == true)
        try await watcher.waitForEvent("overlay.reveal")
        // The first render report won: a later one is not recorded, and says so.
        let late = try await daemon.ctl(["overlay", "failed", overlayId])
        #expect(late.status == 1)
        #expect(late.stderr.contains("not recorded"))
        #expect(!late.stdout.contains("failed (recorded)"))
        // A state error of the daemon is exit 1 with its message, not a usage error.
        let nothingPending = try await daemon.ctl(["confirm", overlayId, "yes"])
        #expect(nothingPending.status == 1)
        #expect(nothingPending.stderr.contains("no bet confirmation is pending"))
        #expect(!nothingPending.stderr.contains("Try"))
        #expect(try await daemon.ctl(["overlay", "answer", overlayId, #"{"choice":"A"}"#]).status == 0)
        try await watcher.waitForEvent("answer.confirm")
        #expect(try await daemon.ctl(["confirm", overlayId, "yes"]).stdout == "Bet accepted\n")
        #expect(try await watcher.waitForEvent("answer.result").data["status"] == "success")
        // Reports from interactivectl never make it the overlay's owner: the overlay stays.
        #expect(try await watcher.call("daemon.status")["overlays"]?.arrayValue?.count == 1)
        let dismissed = try await daemon.ctl(["--json", "overlay", "dismiss", overlayId])
        #expect(try JSONValue.parse(dismissed.stdout) == ["overlayId": .string(overlayId), "ok": true])
        #expect(try await watcher.waitForEvent("overlay.hide").data["reason"] == "dismissed")
        #expect(try await daemon.ctl(["leave"]).stdout == "Left m1\n")
    }

    @Test func vodCommands() async throws {
        let backend = try await ReferenceBackend()
        try await backend.admin("PUT", "/_admin/scenario/v1", VODTests.scenario(backend))
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        let watcher = try await daemon.client()
        try await watcher.subscribe(["overlay.show"])
        #expect(try await daemon.ctl(["join", "v1", "--vod"]).stdout == "v1: joined\n")
        let time = try await daemon.ctl(["--json", "time", "0.5"])
        #expect(time.status == 0)
        #expect(try JSONValue.parse(time.stdout)["seconds"] == 0.5)
        #expect(try await watcher.waitForEvent("overlay.show").data["timelineId"] == "t0")
        #expect(try await daemon.ctl(["time", "-1"]).status == 64)
    }

    @Test func eventsCommandPrintsHeldEventsInLocalTimeAndFilters() async throws {
        let daemon = try await DaemonProcess()
        let client = try await daemon.client()
        _ = try await client.call("config.set", ["deviceClass": "tv"])
        _ = try await client.call("session.login", ["token": "t", "userId": "u"])
        let all = try await daemon.ctl(["events"])
        #expect(all.stdout.contains("config.changed deviceClass=tv"))
        #expect(all.stdout.contains("session.state"))
        let filtered = try await daemon.ctl(["--json", "events", "--type", "session."])
        let lines = filtered.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(try JSONValue.parse(String(lines[0]))["type"] == "session.state")
        // Local time with its offset: a zone 5:30 ahead of UTC (POSIX TZ needs no zone files).
        var environment = ProcessInfo.processInfo.environment
        environment["TZ"] = "IST-5:30"
        let local = try await runCommand([BuiltProducts.ctl, "--socket", daemon.socketPath, "events", "--type", "session."],
                                   environment: environment)
        let utc = try #require(try JSONValue.parse(String(lines[0]))["time"]?.stringValue)
        let line = local.stdout
        #expect(line.range(of: #"^\d\d:\d\d:\d\d\.\d\d\d\+05:30 "#, options: .regularExpression) != nil, "\(line)")
        // 14:03:19.696Z is 19:33:19.696+05:30.
        let utcTime = utc.split(separator: "T")[1].dropLast()
        let parts = utcTime.split(separator: ":")
        let minutes = (Int(parts[0]) ?? 0) * 60 + (Int(parts[1]) ?? 0) + 330
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let expected = "\(two((minutes / 60) % 24)):\(two(minutes % 60)):\(parts[2])+05:30"
        #expect(line.hasPrefix(expected), "\(line) for \(utc)")
    }

    @Test func eventsFollowStopsAndSaysWhyWhenTheDaemonGoes() async throws {
        let daemon = try await DaemonProcess()
        let follower = try BackgroundCommand([BuiltProducts.ctl, "--socket", daemon.socketPath, "events", "-f"])
        _ = try await daemon.client().call("config.set", ["deviceClass": "first"])
        try await follower.waitFor("deviceClass=first", in: \.stdout)
        #expect(try await daemon.stop() == 0)
        #expect(try await follower.waitForExit() == 69)
        // Its stderr comes through a pipe, a little after the exit.
        try await follower.waitFor("events -f stopped", in: \.stderr)
    }

    @Test func eventsFollowWaitReconnectsAcrossARestart() async throws {
        let directory = try TemporaryDirectory()
        var daemon: DaemonProcess? = try await DaemonProcess(directory: directory)
        let socket = try #require(daemon?.socketPath)
        let follower = try BackgroundCommand([BuiltProducts.ctl, "--socket", socket, "events", "-f", "--wait", "--type", "config."])
        _ = try await daemon?.client().call("config.set", ["deviceClass": "before"])
        try await follower.waitFor("deviceClass=before", in: \.stdout)
        #expect(try await daemon?.stop() == 0)
        daemon = nil
        try await follower.waitFor("waiting for it to come back", in: \.stderr)
        let again = try await DaemonProcess(directory: directory)
        _ = try await again.client().call("config.set", ["deviceClass": "after"])
        try await follower.waitFor("deviceClass=after", in: \.stdout)
        #expect(follower.stderr.contains("reconnected"))
        #expect(follower.stderr.contains("the daemon restarted"))
    }
}

/// The manual pages and shell completions made from the programs' own tables.
@Suite struct ManualAndCompletionTests {
    @Test func manPagesRenderAndNameEveryCommandFlagAndKey() async throws {
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["BIN_DIR"] = BuiltProducts.directory.path
        let script = BuiltProducts.packageRoot.appendingPathComponent("scripts/manpages").path
        let made = try await runCommand([script, directory.path], environment: environment)
        #expect(made.status == 0, "\(made.stderr)")
        environment["MANWIDTH"] = "80"
        func render(_ page: String) async throws -> String {
            let result = try await runCommand(["/usr/bin/man", "--warnings", "-P", "cat", "-l", directory.path + "/" + page],
                                        environment: environment)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty, "\(page): \(result.stderr)")
            // What is searched for: the text without roff's hyphenation at line ends.
            return result.stdout.replacingOccurrences(of: "‐\n", with: "").replacingOccurrences(of: "-\n", with: "")
                .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
        let ctlPage = try await render("interactivectl.1")
        for command in InteractivectlTests.commands { #expect(ctlPage.contains("interactivectl \(command)"), "\(command)") }
        for option in ["--socket", "--json", "--follow", "--wait", "--type", "--since", "--user-id", "--token-file", "--vod", "--fanclub"] {
            #expect(ctlPage.contains(option), "\(option)")
        }
        // Every flag of interactived --help, and every key of the daemon's configuration.
        let daemonHelp = try await runCommand([BuiltProducts.daemon, "--help"]).stdout
        let flags = daemonHelp.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("--") }.map { String($0.prefix { $0 != "," }) }
        #expect(flags.count >= 12)
        let daemonPage = try await render("interactived.8")
        for flag in flags { #expect(daemonPage.contains(flag), "\(flag)") }
        let daemon = try await DaemonProcess()
        let keys = try #require(try await daemon.client().call("config.get").objectValue?.keys)
        let confPage = try await render("interactived.conf.5")
        for key in keys { #expect(confPage.contains(key), "\(key)") }
    }

    @Test func bashCompletionLoadsAndCompletesSubcommands() async throws {
        let ctl = BuiltProducts.ctl
        let loaded = try await runCommand(["/bin/bash", "-c", "source <('\(ctl)' completion bash); complete -p interactivectl"])
        #expect(loaded.status == 0, "\(loaded.stderr)")
        #expect(loaded.stdout.contains("-F _interactivectl"))
        func complete(_ words: [String]) async throws -> [String] {
            let array = words.map { "'\($0)'" }.joined(separator: " ")
            let script = """
                source <('\(ctl)' completion bash)
                COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _interactivectl; echo "${COMPREPLY[*]}"
                """
            let result = try await runCommand(["/bin/bash", "-c", script])
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            return result.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        #expect(try await complete(["interactivectl", "con"]) == ["config", "confirm"])
        #expect(try await complete(["interactivectl", "config", ""]) == ["get", "set"])
        #expect(try await complete(["interactivectl", "--socket", "/tmp/x", "overlay", "l"]) == ["loaded"])
        #expect(try await complete(["interactivectl", "events", "--f"]) == ["--follow"])
        #expect(try await complete(["interactivectl", "completion", "z"]) == ["zsh"])
    }

    @Test(arguments: ["zsh", "fish"])
    func otherShellsGetEveryCommand(_ shell: String) async throws {
        let script = try await runCommand([BuiltProducts.ctl, "completion", shell])
        #expect(script.status == 0)
        for word in ["status", "events", "config", "get", "set", "overlay", "loaded", "predict", "open", "completion"] {
            #expect(script.stdout.contains(word), "\(shell): \(word)")
        }
        #expect(try await runCommand([BuiltProducts.ctl, "completion", "tcsh"]).status == 64)
    }
}

/// Runs a command on a pseudo-terminal (python's pty module): what a person at a terminal sees.
enum Pty {
    struct Session {
        let status: Int32
        let output: String
    }

    /// Runs `argv` on a terminal `columns` wide; once `after` appeared, types `input`.
    static func run(_ argv: [String], columns: Int = 80, input: String = "", after: String = "",
                    environment extra: [String: String] = [:]) async throws -> Session {
        let script = """
            import fcntl, json, os, pty, select, struct, sys, termios, time
            argv, columns, typed, after = json.loads(sys.argv[1])
            pid, fd = pty.fork()
            if pid == 0:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
                os.execv(argv[0], argv)
            output, sent, deadline = b"", False, time.monotonic() + 20
            while time.monotonic() < deadline:
                if not sent and after.encode() in output:
                    os.write(fd, typed.encode())
                    sent = True
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    output += chunk
            if time.monotonic() >= deadline:
                os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(output.decode(errors="replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        let arguments = JSONValue.array([.array(argv.map(JSONValue.string)), .number(Double(columns)), .string(input), .string(after)])
        let result = try await runCommand(["python3", "-c", script, arguments.jsonText], environment: environment)
        return Session(status: result.status, output: result.stdout.replacingOccurrences(of: "\r\n", with: "\n"))
    }
}

/// The shipped unit files.
@Suite struct SystemdUnitTests {
    @Test func serviceExposureIsAtMostTwo() async throws {
        let unit = BuiltProducts.packageRoot.appendingPathComponent("systemd/interactived.service").path
        let result = try await runCommand(["/usr/bin/systemd-analyze", "security", "--offline=true", "--no-pager", unit])
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        #expect(score <= 2.0, "\(line)")
    }

    /// The kernel, not only the daemon's own bounds, caps what a flood can make it hold.
    @Test func serviceMemoryIsCapped() async throws {
        let unit = BuiltProducts.packageRoot.appendingPathComponent("systemd/interactived.service").path
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let settings = text.split(separator: "\n").filter { $0.hasPrefix("MemoryMax=") || $0.hasPrefix("MemoryHigh=") }
        #expect(settings == ["MemoryHigh=96M", "MemoryMax=128M"])
    }
}
