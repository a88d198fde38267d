extension String {
    /// The first sentence of the first line, without its full stop: a summary for a list.
    var firstSentence: String {
        let line = split(separator: "\n").first.map(String.init) ?? self
        guard let end = line.firstRange(of: ". ") else { return line.hasSuffix(".") ? String(line.dropLast()) : line }
        return String(line[..<end.lowerBound])
    }
}

/// Help text made from the command table, wrapped to a width and never cut.
struct Help {
    let width: Int

    static let version = "interactivectl 0.1.0"
    static let description = "Control and watch interactived, the Interactive daemon."
    static let notes = """
        Colour is used only on a terminal, and never when NO_COLOR is set. Event times are the \
        local time with its offset from UTC.
        """

    /// `interactivectl --help`.
    func general() -> String {
        var out = wrapLines("Usage: interactivectl [--socket PATH] [--json] COMMAND [ARGS]", indent: 7)
        out += ["", wrap(Help.description), "", "Commands:"]
        let nameWidth = min(24, (CommandTable.commands.map(\.name.count).max() ?? 0) + 2)
        for command in CommandTable.commands {
            out += hanging(command.name, command.summary.firstSentence, labelWidth: nameWidth, indent: 2)
        }
        out += ["", "Global options:"] + optionList(GlobalOptions.all)
        out += ["", "Exit status:"]
        out += ExitStatus.documented.flatMap { hanging("\($0.0.rawValue)", $0.1, labelWidth: 4, indent: 2) }
        out += ["", wrap(Help.notes), "", wrap("'interactivectl COMMAND --help' describes a command.")]
        return out.joined(separator: "\n")
    }

    /// `interactivectl COMMAND --help`.
    func command(_ command: Command) -> String {
        var out = wrapLines("Usage: interactivectl \(command.synopsis)", indent: 7)
        out += ["", wrap(command.summary)]
        for paragraph in paragraphs(command.details) { out += ["", wrap(paragraph)] }
        if !command.options.isEmpty { out += ["", "Options:"] + optionList(command.options) }
        out += ["", wrap("Global options: --socket PATH, --json, -h/--help (see 'interactivectl --help').")]
        return out.joined(separator: "\n")
    }

    /// `interactivectl GROUP --help`: the group's subcommands.
    func group(_ word: String, _ members: [Command]) -> String {
        var out = ["Usage: interactivectl \(word) SUBCOMMAND [ARGS]", ""]
        if let summary = CommandTable.groupSummaries[word] { out += [wrap(summary), ""] }
        out.append("Subcommands:")
        let nameWidth = (members.map(\.name.count).max() ?? 0) + 2
        for member in members {
            out += hanging(member.name, member.summary.firstSentence, labelWidth: nameWidth, indent: 2)
        }
        out += ["", wrap("'interactivectl \(word) SUBCOMMAND --help' describes one.")]
        return out.joined(separator: "\n")
    }

    // MARK: Layout

    private func optionList(_ options: [OptionSpec]) -> [String] {
        let labelWidth = min(22, (options.map(\.label.count).max() ?? 0) + 2)
        return options.flatMap { hanging($0.label, $0.help, labelWidth: labelWidth, indent: 2) }
    }

    /// `label` in a column of `labelWidth` after `indent` spaces, then `text` wrapped beside it;
    /// a label too wide for its column gets the text on the next lines.
    private func hanging(_ label: String, _ text: String, labelWidth: Int, indent: Int) -> [String] {
        let pad = String(repeating: " ", count: indent)
        let textIndent = indent + labelWidth
        let lines = Help.wrap(text, width: max(20, width - textIndent))
        let continuation = String(repeating: " ", count: textIndent)
        if label.count + 1 > labelWidth {
            return [pad + label] + lines.map { continuation + $0 }
        }
        return lines.enumerated().map { index, line in
            (index == 0 ? pad + Output.padded(label, labelWidth) : continuation) + line
        }
    }

    private func wrap(_ text: String) -> String { Help.wrap(text, width: width).joined(separator: "\n") }

    /// A long line wrapped with its continuation lines indented by `indent`.
    private func wrapLines(_ text: String, indent: Int) -> [String] {
        let lines = Help.wrap(text, width: width)
        guard lines.count > 1 else { return lines }
        let rest = Help.wrap(lines.dropFirst().joined(separator: " "), width: max(20, width - indent))
        return [lines[0]] + rest.map { String(repeating: " ", count: indent) + $0 }
    }

    /// The paragraphs of `text` (blank-line separated). Within one, a line break is kept only
    /// around list lines (those starting with "-" or a space: option tables); other lines are
    /// joined so that the paragraph wraps as a whole.
    private func paragraphs(_ text: String) -> [String] {
        text.split(separator: "\n\n", omittingEmptySubsequences: true).map { paragraph in
            var joined = ""
            var previousIsList = false
            for line in paragraph.split(separator: "\n") {
                let isList = line.hasPrefix("-") || line.hasPrefix(" ")
                if !joined.isEmpty { joined += isList || previousIsList ? "\n" : " " }
                joined += line
                previousIsList = isList
            }
            return joined
        }
    }


    /// Words of `text` in lines of at most `width` characters. A word longer than a line gets a
    /// line of its own and is never cut; line breaks in `text` are kept.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for source in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = ""
            for word in source.split(separator: " ", omittingEmptySubsequences: true) {
                if current.isEmpty {
                    current = String(word)
                } else if current.count + 1 + word.count <= width {
                    current += " " + word
                } else {
                    lines.append(current)
                    current = String(word)
                }
            }
            lines.append(current)
        }
        return lines
    }
}
