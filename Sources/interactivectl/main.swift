import Foundation
import JSONValue

/// Every command, in the order help lists them.
let commands: [Command] = CoreCommands.all + RoomCommands.all + PlaybackCommands.all + [ReloadCommand.reload]

let generalHelp = """
    Usage: interactivectl [--socket PATH] [--json] COMMAND [ARGS]

    Control and watch interactived, the Interactive daemon.

    Commands:
    \(commands.map { "  \($0.usage.padding(toLength: 58, withPad: " ", startingAt: 0)) \($0.summary.prefix { $0 != "." })" }.joined(separator: "\n"))

    Global options:
      --socket PATH   the daemon's socket (default $INTERACTIVED_SOCKET, else /run/interactived/interactived.sock
                      if it exists, else $XDG_RUNTIME_DIR/interactived.sock)
      --json          machine-readable output (one JSON value per line)
      -h, --help      help for interactivectl or for a command ('interactivectl help COMMAND' too)
      --version       print the version

    Exit status: 0 success, 1 the daemon answered with an error, 64 bad usage, 69 the daemon
    cannot be reached, 77 permission denied (an observer asked for a control method).
    Colour is used only on a terminal, and never when NO_COLOR is set.
    """

@MainActor func run() -> ExitStatus {
    let environment = ProcessInfo.processInfo.environment
    let arguments: Arguments
    do {
        arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    } catch {
        Output.errorLine("\(error)\nTry 'interactivectl --help'.")
        return .usage
    }
    if arguments.flag("--version") {
        print("interactivectl 0.1.0")
        return .ok
    }
    var words = arguments.positional
    var wantsHelp = arguments.flag("--help")
    if words.first == "help" {
        wantsHelp = true
        words.removeFirst()
    }
    guard !words.isEmpty else {
        print(generalHelp)
        return wantsHelp ? .ok : .usage
    }
    let match = commands.filter { words.starts(with: $0.words) }.max { $0.words.count < $1.words.count }
    guard let command = match else {
        let group = commands.filter { $0.words.first == words.first }
        if !group.isEmpty {
            Output.errorLine("'\(words.joined(separator: " "))' needs a subcommand: \(group.map(\.name).joined(separator: ", "))")
        } else {
            Output.errorLine("unknown command '\(words[0])'\nTry 'interactivectl --help'.")
        }
        return wantsHelp ? .ok : .usage
    }
    if wantsHelp {
        print(command.help())
        return .ok
    }
    let unknown = arguments.unknownFlags(allowed: command.options.union(["--socket", "--json", "--help"]))
    guard unknown.isEmpty else {
        Output.errorLine("\(command.name): unknown option \(unknown.joined(separator: ", "))\nTry 'interactivectl \(command.name) --help'.")
        return .usage
    }
    var commandArguments = arguments
    commandArguments.positional = Array(words.dropFirst(command.words.count))
    let context = CommandContext(arguments: commandArguments, output: Output(json: arguments.flag("--json"), environment: environment),
                                 environment: environment)
    do {
        try command.run(context)
        return .ok
    } catch {
        Output.errorLine(error.message)
        if error.status == .usage { Output.errorLine("Try 'interactivectl \(command.name) --help'.") }
        return error.status
    }
}

exit(run().rawValue)
