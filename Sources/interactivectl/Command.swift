import JSONValue

/// One option a command accepts: its name, the placeholder of its value (nil for a flag), and
/// what it does. Help, the man page and the shell completions are all made from these.
struct OptionSpec: Sendable {
    let name: String
    let short: Character?
    let value: String?
    let help: String
    /// Shown without brackets in the synopsis; the command checks that it was given.
    let required: Bool

    init(_ name: String, short: Character? = nil, value: String? = nil, required: Bool = false, _ help: String) {
        self.name = name
        self.short = short
        self.value = value
        self.required = required
        self.help = help
    }

    /// How it is written in a synopsis: `--timeout MS`, `-f`/`--follow`.
    var synopsis: String { value.map { "\(name) \($0)" } ?? name }

    /// How it is written in an option list: `-f, --follow`, `--timeout MS`.
    var label: String {
        let long = synopsis
        return short.map { "-\($0), \(long)" } ?? long
    }
}

/// What a positional argument completes to in the shells.
enum ArgumentCompletion: Sendable, Equatable {
    case none
    case words([String])
}

/// One `interactivectl` command.
struct Command: Sendable {
    /// The words that select it, e.g. ["config", "set"].
    let words: [String]
    /// Its positional arguments as the synopsis shows them, e.g. "KEY VALUE".
    let arguments: String
    let summary: String
    /// Paragraphs after the summary (blank-line separated), wrapped to the terminal.
    let details: String
    /// Options it accepts besides the global ones.
    let options: [OptionSpec]
    /// What its first positional argument completes to.
    let completion: ArgumentCompletion
    /// Whether the daemon's "invalid params" replies are about what the user typed (exit 64)
    /// rather than about the daemon's state (exit 1).
    let daemonParamsAreUsage: Bool
    let run: @Sendable (CommandContext) throws(CommandFailure) -> Void

    init(_ words: [String], arguments: String = "", summary: String, details: String = "", options: [OptionSpec] = [],
         completion: ArgumentCompletion = .none, daemonParamsAreUsage: Bool = false,
         run: @escaping @Sendable (CommandContext) throws(CommandFailure) -> Void) {
        self.words = words
        self.arguments = arguments
        self.summary = summary
        self.details = details
        self.options = options
        self.completion = completion
        self.daemonParamsAreUsage = daemonParamsAreUsage
        self.run = run
    }

    var name: String { words.joined(separator: " ") }

    /// `config set KEY VALUE [--json]`: the command's synopsis without the program name.
    var synopsis: String {
        var parts = [name]
        parts += options.filter(\.required).map(\.synopsis)
        if !arguments.isEmpty { parts.append(arguments) }
        parts += options.filter { !$0.required }.map { "[\($0.synopsis)]" }
        parts.append("[--json]")
        return parts.joined(separator: " ")
    }
}

/// The options every command accepts.
enum GlobalOptions {
    static let all: [OptionSpec] = [
        OptionSpec("--socket", value: "PATH", """
            the daemon's socket (default $INTERACTIVED_SOCKET, else /run/interactived/interactived.sock if it \
            exists, else $XDG_RUNTIME_DIR/interactived.sock)
            """),
        OptionSpec("--json", short: "j", """
            machine-readable output: each result as one JSON value per line on standard output, and an error \
            as one JSON object {"error":{…}} on standard error
            """),
        OptionSpec("--help", short: "h", "help for interactivectl or for a command ('interactivectl help COMMAND' too)"),
        OptionSpec("--version", "print the version"),
    ]
}

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

    /// A whole number of milliseconds from option `name`, or `fallback` when not given.
    func milliseconds(_ name: String, default fallback: Int) throws(CommandFailure) -> Int {
        guard let text = arguments.value(name) else { return fallback }
        guard let ms = Int(text), ms >= 0, ms <= 3_600_000 else {
            throw CommandFailure(status: .usage, message: "\(name) needs milliseconds from 0 to 3600000")
        }
        return ms
    }
}

extension Command {
    /// A command in the command table's first form: a usage line and the names of its options,
    /// described in `details`. Command files written against that form (reload, playback) keep
    /// compiling; an option takes a value when the usage line shows a placeholder after it
    /// (`--union-info X`), and is required when the usage line does not bracket it.
    init(words: [String], usage: String, summary: String, details: String, options: Set<String>,
         run: @escaping @Sendable (CommandContext) throws(CommandFailure) -> Void) {
        var tokens = usage.split(separator: " ").map(String.init).dropFirst(words.count)
        var positional: [String] = []
        var specs: [OptionSpec] = []
        while let token = tokens.popFirst() {
            let bare = token.filter { $0 != "[" && $0 != "]" }
            guard bare.hasPrefix("-") else {
                positional.append(token)
                continue
            }
            guard options.contains(bare) else { continue } // --json and the global options
            var value: String?
            if let next = tokens.first, !next.hasPrefix("-"), !next.hasPrefix("["), !token.hasSuffix("]") {
                value = next.filter { $0 != "[" && $0 != "]" }
                tokens.removeFirst()
            }
            specs.append(OptionSpec(bare, value: value, required: !token.hasPrefix("["), "see the description above"))
        }
        for name in options.sorted() where !specs.contains(where: { $0.name == name }) {
            specs.append(OptionSpec(name, "see the description above"))
        }
        self.init(words, arguments: positional.joined(separator: " "), summary: summary, details: details,
                  options: specs, run: run)
    }
}
