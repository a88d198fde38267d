import ManPage

/// interactivectl(1), made from the command table (`interactivectl --manpage`, a hidden option
/// that scripts/manpages uses).
enum ManualPage {
    static let hiddenFlag = "--manpage"

    static func interactivectl() -> String {
        var page = Roff(name: "interactivectl", section: "1", title: "control and watch interactived, the Interactive daemon",
                        source: Help.version, manual: "interactived manual", date: "")
        page.section("Synopsis")
        page.literal("interactivectl [--socket PATH] [--json] COMMAND [ARGS]\n"
            + CommandTable.commands.map { "interactivectl \($0.synopsis)" }.joined(separator: "\n"))
        page.section("Description")
        page.paragraph(Help.description + " " + Help.notes)
        page.section("Commands")
        for command in CommandTable.commands {
            var text = command.summary
            if !command.details.isEmpty { text += "\n\n" + command.details }
            page.item("interactivectl \(command.synopsis)", text, list: command.options.map { ($0.label, $0.help) })
        }
        page.section("Options")
        for option in GlobalOptions.all { page.item(option.label, option.help) }
        page.section("Environment")
        page.item("INTERACTIVED_SOCKET", "the daemon's socket when --socket is not given")
        page.item("XDG_RUNTIME_DIR", "its interactived.sock is used when neither --socket nor $INTERACTIVED_SOCKET is set and the system socket does not exist")
        page.item("NO_COLOR", "no colour when set and not empty")
        page.item("COLUMNS", "the width help is wrapped to when standard output is not a terminal (default 80)")
        page.section("Exit status")
        for (status, meaning) in ExitStatus.documented { page.item("\(status.rawValue)", meaning) }
        page.section("Files")
        page.item("/run/interactived/interactived.sock", "the daemon's socket when it runs as a system service")
        page.section("See also")
        page.paragraph("interactived(8), interactived.conf(5)")
        return page.text
    }
}
