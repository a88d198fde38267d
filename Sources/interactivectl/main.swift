import FoundationEssentials
import Glibc
import IPCProtocol
import JSONValue

/// Runs the command line and returns the exit status.
func run(_ raw: [String], environment: [String: String]) -> ExitStatus {
    // Known before parsing, so that even a command line that does not parse fails as JSON.
    let wantsJSON = raw.contains("--json") || raw.contains { $0.hasPrefix("-") && !$0.hasPrefix("--") && $0.contains("j") }
    let output = Output(json: wantsJSON, environment: environment)
    let help = Help(width: Terminal.width(environment: environment))
    func usage(_ message: String, helpFor topic: String? = nil) -> ExitStatus {
        let command = topic.map { "interactivectl \($0) --help" } ?? "interactivectl --help"
        output.failure(CommandFailure(status: .usage, message: message), hint: "Try '\(command)'.")
        return .usage
    }

    let arguments: Arguments
    do {
        arguments = try Arguments(raw, valueOptions: CommandTable.valueOptions, shortOptions: CommandTable.shortOptions)
    } catch {
        return usage(error.description)
    }
    if arguments.flag(ManualPage.hiddenFlag) {
        Output.write(ManualPage.interactivectl(), to: STDOUT_FILENO)
        return .ok
    }
    if arguments.flag("--version") {
        output.json ? output.emit(["version": .string(Help.version)]) : output.line(Help.version)
        return .ok
    }
    var words = arguments.positional
    var wantsHelp = arguments.flag("--help")
    if words.first == "help" {
        wantsHelp = true
        words.removeFirst()
    }
    guard let first = words.first else {
        if wantsHelp {
            output.line(help.general())
            return .ok
        }
        return usage("no command given")
    }
    guard let command = CommandTable.command(for: words) else {
        let members = CommandTable.group(first)
        if members.isEmpty { return usage("unknown command '\(first)'") }
        if wantsHelp && words.count == 1 {
            output.line(help.group(first, members))
            return .ok
        }
        let message = words.count == 1 ? "'\(first)' needs a subcommand" : "unknown command '\(words.prefix(2).joined(separator: " "))'"
        return usage("\(message): \(members.map(\.name).joined(separator: ", "))", helpFor: first)
    }
    if wantsHelp {
        output.line(help.command(command))
        return .ok
    }
    let allowed = Set((command.options + GlobalOptions.all).map(\.name))
    let unknown = arguments.unknownOptions(allowed: allowed)
    guard unknown.isEmpty else {
        return usage("\(command.name): unknown option \(unknown.joined(separator: ", "))", helpFor: command.name)
    }
    var commandArguments = arguments
    commandArguments.positional = Array(words.dropFirst(command.words.count))
    let context = CommandContext(arguments: commandArguments, output: output, environment: environment)
    do {
        try command.run(context)
        return .ok
    } catch {
        var failure = error
        // A refused value of what the user typed is a usage error; a refusal because of the
        // daemon's state (a flag that overrides the key, nothing pending) is not.
        if command.daemonParamsAreUsage, let rpc = failure.rpc, rpc.code == RPCErrorCode.invalidParams,
           rpc.data?["overriddenBy"] == nil {
            failure = CommandFailure(status: .usage, message: failure.message, rpc: rpc)
        }
        output.failure(failure, hint: failure.status == .usage ? "Try 'interactivectl \(command.name) --help'." : nil)
        return failure.status
    }
}

exit(run(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment).rawValue)
