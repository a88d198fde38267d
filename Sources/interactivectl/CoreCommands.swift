import Foundation
import IPCProtocol
import JSONValue

/// status, events, config, login, logout, call.
enum CoreCommands {
    static let all: [Command] = [status, events, configGet, configSet, login, logout, call]

    static let status = Command(
        words: ["status"], usage: "status [--json]",
        summary: "Show the daemon's state: backend connection, room, viewer session, overlays on screen.",
        details: "With --json, prints daemon.status exactly as the daemon returns it.", options: []
    ) { context throws(CommandFailure) in
        let snapshot = try context.connect().call("daemon.status")
        if context.output.json { return context.output.emit(snapshot) }
        StatusPrinter(output: context.output).print(snapshot)
    }

    static let events = Command(
        words: ["events"], usage: "events [-f] [--type PREFIX]... [--since SEQ] [--json]",
        summary: "Print the daemon's events: the recent ones held by the daemon, or with -f every new one as it happens.",
        details: """
            --type PREFIX   only events whose type starts with PREFIX (repeatable), e.g. --type overlay.
            --since SEQ     start after event SEQ of this boot (default: the oldest still held).
            -f, --follow    keep printing new events until interrupted.
            """,
        options: ["--follow", "--type", "--since"]
    ) { context throws(CommandFailure) in
        let connection = try context.connect()
        var params: [String: JSONValue] = [:]
        let types = context.arguments.values("--type")
        if !types.isEmpty { params["types"] = .array(types.map(JSONValue.string)) }
        if let since = context.arguments.value("--since") {
            guard let seq = Int(since), seq >= 0 else { throw CommandFailure(status: .usage, message: "--since needs a whole number") }
            params["since"] = .number(Double(seq))
        } else {
            params["since"] = 0
        }
        let subscribed = try connection.call("events.subscribe", .object(params))
        let printer = EventPrinter(output: context.output)
        let follow = context.arguments.flag("--follow")
        let lastSeq = subscribed["seq"]?.intValue ?? 0
        do throws(IPCClientError) {
            while true {
                guard let event = try connection.client.nextEvent(timeoutMs: follow ? 3_600_000 : 300) else {
                    if follow { continue }
                    return
                }
                printer.print(event)
                if !follow, let seq = event.seq, seq >= lastSeq { return }
            }
        } catch {
            throw DaemonConnection.failure(error)
        }
    }

    static let configGet = Command(
        words: ["config", "get"], usage: "config get [KEY] [--origin] [--json]",
        summary: "Show the effective configuration, or one key of it.",
        details: """
            --origin   also say where each value comes from (default, file, runtime, flag, unset), and a
                       start-only value the file changed that applies at the next restart.
            """,
        options: ["--origin"]
    ) { context throws(CommandFailure) in
        let origin = context.arguments.flag("--origin")
        let config = try context.connect().call("config.get", origin ? ["origin": true] : nil)
        let show: (JSONValue) -> String = { value in
            guard origin else { return Output.plain(value) }
            let pending = value["pending"].map { "; \(Output.plain($0)) after a restart" } ?? ""
            return "\(Output.plain(value["value"]))  (\(Output.plain(value["origin"]))\(pending))"
        }
        if let key = context.arguments.positional.first {
            guard let value = config[key] else { throw CommandFailure(status: .usage, message: "unknown configuration key '\(key)'") }
            return context.output.json ? context.output.emit(value) : context.output.line(show(value))
        }
        if context.output.json { return context.output.emit(config) }
        for (key, value) in (config.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            context.output.line("\(context.output.bold(key.padding(toLength: 16, withPad: " ", startingAt: 0))) \(show(value))")
        }
    }

    static let configSet = Command(
        words: ["config", "set"], usage: "config set KEY VALUE [--json]",
        summary: "Change a runtime configuration key; the daemon keeps it across restarts.",
        details: """
            VALUE is read as JSON when it is valid JSON (true, 30000, {"width":1280,"height":720}), else as a
            string. 'null' drops the runtime value so the file's or the default applies again.
            """,
        options: []
    ) { context throws(CommandFailure) in
        let key = try context.argument(0, "KEY")
        let text = try context.argument(1, "VALUE")
        let value = (try? JSONValue.parse(text)) ?? .string(text)
        let config = try context.connect().call("config.set", .object([key: value]))
        if context.output.json { return context.output.emit(config) }
        context.output.line("\(key) = \(Output.plain(config[key]))")
    }

    static let login = Command(
        words: ["login"], usage: "login --user-id ID [--display-name NAME] [--token-file FILE] [--json]",
        summary: "Log the viewer in. The token is read from FILE, or from standard input; never from the command line.",
        details: "A live room reconnects so that the backend sees the new viewer.",
        options: ["--user-id", "--display-name", "--token-file"]
    ) { context throws(CommandFailure) in
        guard let userId = context.arguments.value("--user-id") else {
            throw CommandFailure(status: .usage, message: "missing --user-id")
        }
        let token = try readToken(file: context.arguments.value("--token-file"))
        var params: [String: JSONValue] = ["token": .string(token), "userId": .string(userId)]
        if let name = context.arguments.value("--display-name") { params["displayName"] = .string(name) }
        let state = try context.connect().call("session.login", .object(params))
        if context.output.json { return context.output.emit(state) }
        context.output.line("Logged in as \(Output.plain(state["userId"]))")
    }

    static let logout = Command(
        words: ["logout"], usage: "logout [--json]", summary: "Log the viewer out; the viewer is anonymous again.",
        details: "", options: []
    ) { context throws(CommandFailure) in
        let state = try context.connect().call("session.logout")
        if context.output.json { return context.output.emit(state) }
        context.output.line("Logged out")
    }

    static let call = Command(
        words: ["call"], usage: "call METHOD [PARAMS-JSON]",
        summary: "Send one raw request and print the reply's result as JSON.",
        details: "Example: interactivectl call daemon.hello '{\"client\":\"me\",\"protocol\":1}'", options: []
    ) { context throws(CommandFailure) in
        let method = try context.argument(0, "METHOD")
        var params: JSONValue?
        if context.arguments.positional.count > 1 {
            do {
                params = try JSONValue.parse(context.arguments.positional[1])
            } catch {
                throw CommandFailure(status: .usage, message: "PARAMS-JSON is not JSON: \(error)")
            }
        }
        context.output.emit(try context.connect().call(method, params))
    }

    /// The token from a file or standard input, without surrounding white space.
    private static func readToken(file: String?) throws(CommandFailure) -> String {
        let data: Data?
        if let file {
            data = FileManager.default.contents(atPath: file)
            if data == nil { throw CommandFailure(status: .usage, message: "cannot read --token-file \(file)") }
        } else {
            if isatty(STDIN_FILENO) == 1 { FileHandle.standardError.write(Data("Token: ".utf8)) }
            data = FileHandle.standardInput.availableData
        }
        let token = String(decoding: data ?? Data(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw CommandFailure(status: .usage, message: "the token is empty") }
        return token
    }
}
