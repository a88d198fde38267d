import Foundation
import JSONValue

/// What every command gets: the parsed arguments, the output, and a way to reach the daemon.
struct CommandContext: Sendable {
    let arguments: Arguments
    let output: Output
    let environment: [String: String]

    func connect() throws(CommandFailure) -> DaemonConnection {
        try DaemonConnection(socketFlag: arguments.value("--socket"), environment: environment)
    }

    /// The positional argument at `index` (after the command words), or a usage error naming it.
    func argument(_ index: Int, _ name: String) throws(CommandFailure) -> String {
        guard index < arguments.positional.count else {
            throw CommandFailure(status: .usage, message: "missing \(name)")
        }
        return arguments.positional[index]
    }
}

/// One `interactivectl` command.
struct Command: Sendable {
    /// The words that select it, e.g. ["config", "set"].
    let words: [String]
    let usage: String
    let summary: String
    let details: String
    /// Options it accepts besides the global ones.
    let options: Set<String>
    let run: @Sendable (CommandContext) throws(CommandFailure) -> Void

    var name: String { words.joined(separator: " ") }

    func help() -> String {
        var text = "Usage: interactivectl \(usage)\n\n\(summary)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        text += "\nGlobal options: --socket PATH, --json, -h/--help"
        return text
    }
}
