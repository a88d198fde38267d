import IPCProtocol
import JSONValue

/// status, events, config, login, logout, call.
enum CoreCommands {
    static let all: [Command] = [status, EventsCommand.events, configGet, configSet, LoginCommand.login, logout, call]

    static let status = Command(
        ["status"],
        summary: "Show the daemon's state: backend connection, room, viewer session, overlays on screen.",
        details: "With --json, prints daemon.status exactly as the daemon returns it."
    ) { context throws(CommandFailure) in
        let snapshot = try context.connect().call(DaemonStatusParams())
        if context.output.json { return context.output.emit(snapshot.json) }
        StatusPrinter(output: context.output).print(snapshot)
    }

    static let configGet = Command(
        ["config", "get"], arguments: "[KEY]",
        summary: "Show the effective configuration, or one key of it.",
        details: "The keys are described in interactived.conf(5).",
        options: [OptionSpec("--origin", """
            also say where each value comes from (default, file, runtime, flag, unset), and a start-only value \
            the file changed that applies at the next restart
            """)]
    ) { context throws(CommandFailure) in
        let origin = context.arguments.flag("--origin")
        let config = try context.connect().call(ConfigGetParams(origin: origin))
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
            context.output.line("\(context.output.bold(Output.padded(key, 16))) \(show(value))")
        }
    }

    static let configSet = Command(
        ["config", "set"], arguments: "KEY VALUE",
        summary: "Change a runtime configuration key; the daemon keeps it across restarts.",
        details: """
            VALUE is read as JSON when it is valid JSON (true, 30000, {"width":1280,"height":720}), else as a \
            string. 'null' drops the runtime value so the file's or the default applies again. The keys are \
            described in interactived.conf(5).

            A key the daemon was started with as a command-line flag (for example --socket-url) cannot be \
            changed at runtime: the flag takes precedence, and the daemon refuses the change and names the flag.
            """,
        daemonParamsAreUsage: true
    ) { context throws(CommandFailure) in
        let key = try context.argument(0, "KEY")
        let text = try context.argument(1, "VALUE")
        let value = (try? JSONValue.parse(text)) ?? .string(text)
        let config = try context.connect().call(ConfigSetParams(changes: [key: value]))
        if context.output.json { return context.output.emit(config) }
        context.output.line("\(key) = \(Output.plain(config[key]))")
    }

    static let logout = Command(
        ["logout"], summary: "Log the viewer out; the viewer is anonymous again."
    ) { context throws(CommandFailure) in
        let state = try context.connect().call(SessionLogoutParams())
        if context.output.json { return context.output.emit(state.json) }
        context.output.line("Logged out")
    }

    static let call = Command(
        ["call"], arguments: "METHOD [PARAMS-JSON]",
        summary: "Send one raw request and print the reply's result as JSON.",
        details: """
            Every error reply of the daemon, whatever its code, is exit status 1 here.

            Example: interactivectl call daemon.hello '{"client":"me","protocol":1}'
            """
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
}
