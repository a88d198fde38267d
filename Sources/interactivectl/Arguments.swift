/// A command line split into positional arguments and options.
struct Arguments: Sendable {
    var positional: [String] = []
    private var options: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Splits `raw`: options in `valueOptions` take a value (`--name VALUE` or `--name=VALUE`),
    /// every other `--name` is a flag; `shortOptions` maps single letters (`-fj`) to flags.
    init(_ raw: [String], valueOptions: Set<String>, shortOptions: [Character: String]) throws(UsageError) {
        var remaining = raw[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positional.append(contentsOf: remaining)
                break
            }
            if argument.hasPrefix("--") && argument.count > 2 {
                var name = argument
                var inline: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    inline = String(argument[argument.index(after: equals)...])
                }
                if valueOptions.contains(name) {
                    guard let value = inline ?? remaining.popFirst() else { throw UsageError("\(name) needs a value") }
                    options[name, default: []].append(value)
                } else {
                    guard inline == nil else { throw UsageError("\(name) takes no value") }
                    flags.insert(name)
                }
            } else if argument.hasPrefix("-") && argument.count > 1 && Double(argument) == nil {
                for letter in argument.dropFirst() {
                    guard let name = shortOptions[letter] else { throw UsageError("unknown option -\(letter)") }
                    flags.insert(name)
                }
            } else {
                positional.append(argument)
            }
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }

    /// Options given that `allowed` does not list.
    func unknownOptions(allowed: Set<String>) -> [String] {
        (flags.subtracting(allowed).union(Set(options.keys).subtracting(allowed))).sorted()
    }
}

/// A command line that cannot be run; exit status 64.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
