import Glibc
import InteractiveDaemon
import ManPage

/// Prints interactived(8) or interactived.conf(5) in roff, made from the daemon's own tables:
/// its --help text (`DaemonOptions.usage`) and its configuration keys (`ConfigReference`).
/// scripts/manpages runs it; the pages are not kept in the repository.
///
/// Usage: interactived-manpages interactived.8|interactived.conf.5
let source = "interactived 0.1.0"
let manual = "interactived manual"

/// `DaemonOptions.usage` split into its parts: the description, each option, and the closing
/// paragraphs (signals, exit status).
struct DaemonHelp {
    var description: [String] = []
    var options: [(label: String, text: String)] = []
    var closing: [String] = []

    init(_ usage: String) {
        enum Part { case head, description, options, closing }
        var part = Part.head
        var paragraph: [String] = []
        func flush() {
            let text = paragraph.joined(separator: " ")
            paragraph = []
            guard !text.isEmpty else { return }
            if part == .description { description.append(text) } else { closing.append(text) }
        }
        for raw in usage.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            let trimmed = line.trimmedSpaces
            switch part {
            case .head:
                if trimmed.isEmpty { part = .description }
            case .description:
                if trimmed == "Options:" {
                    flush()
                    part = .options
                } else if trimmed.isEmpty {
                    flush()
                } else {
                    paragraph.append(trimmed)
                }
            case .options:
                if trimmed.isEmpty {
                    part = .closing
                } else if line.hasPrefix("  -") {
                    let entry = line.dropFirst(2)
                    if let gap = entry.firstRange(of: "  ") {
                        options.append((String(entry[..<gap.lowerBound]), entry[gap.upperBound...].trimmedSpaces))
                    } else {
                        options.append((String(entry), ""))
                    }
                } else if let last = options.indices.last {
                    options[last].text += " " + trimmed
                }
            case .closing:
                // "Signals: …", "Exit status: …": each heading starts a paragraph of its own.
                if trimmed.isEmpty || DaemonHelp.heading(of: trimmed) != nil { flush() }
                if !trimmed.isEmpty { paragraph.append(trimmed) }
            }
        }
        flush()
    }

    /// "Exit status" of "Exit status: 0 …": a few words of letters before a colon.
    static func heading(of line: String) -> String? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let words = line[..<colon]
        guard words.count <= 20, words.allSatisfy({ $0.isLetter || $0 == " " }) else { return nil }
        return String(words)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces.
    var trimmedSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

func daemonPage() -> String {
    let help = DaemonHelp(DaemonOptions.usage)
    var page = Roff(name: "interactived", section: "8", title: "the Interactive daemon", source: source, manual: manual, date: "")
    page.section("Synopsis")
    page.literal("interactived [OPTIONS]")
    page.section("Description")
    for paragraph in help.description { page.paragraph(paragraph) }
    page.paragraph("""
        It is normally started by systemd through interactived.socket (socket activation) as the \
        interactived.service unit, and controlled with interactivectl(1). Its configuration file and keys are \
        described in interactived.conf(5); the local API in docs/ipc.md of the project.
        """)
    page.section("Options")
    for option in help.options { page.item(option.label, option.text) }
    for paragraph in help.closing {
        if let heading = DaemonHelp.heading(of: paragraph) {
            page.section(heading)
            page.paragraph(paragraph.dropFirst(heading.count + 1).trimmedSpaces)
        } else {
            page.paragraph(paragraph)
        }
    }
    page.section("Environment")
    page.item("INTERACTIVED_CONFIG", "the configuration file when --config is not given")
    page.item("INTERACTIVED_SOCKET", "the local API socket when --socket is not given")
    page.item("XDG_RUNTIME_DIR", "where the socket goes when not run as root and neither is given")
    page.item("STATE_DIRECTORY", "the state directory systemd made (StateDirectory=), used when stateDirectory is not configured")
    page.item("NOTIFY_SOCKET, WATCHDOG_USEC", "set by systemd: readiness, status and watchdog notifications")
    page.item("LISTEN_FDS, LISTEN_PID", "set by systemd: the socket passed by interactived.socket")
    page.item("JOURNAL_STREAM", "set by systemd: with logTarget auto, logs go to the journal with structured fields")
    page.section("Files")
    page.item("/etc/interactived/config.json", "the configuration file; see interactived.conf(5)")
    page.item("/run/interactived/interactived.sock", "the local API socket (mode 0666; what a peer may do depends on its credentials)")
    page.item("/var/lib/interactived", "the state directory: the SQLite store")
    page.section("See also")
    page.paragraph("interactivectl(1), interactived.conf(5), systemd.service(5), journalctl(1)")
    return page.text
}

func configurationPage() -> String {
    var page = Roff(name: "interactived.conf", section: "5", title: "configuration of interactived",
                    source: source, manual: manual, date: "")
    page.section("Synopsis")
    page.literal("/etc/interactived/config.json")
    page.section("Description")
    page.paragraph("""
        The configuration file of interactived(8) is one JSON object whose members are the keys below; \
        unknown keys and invalid values are refused, naming the key. A missing file means no keys. \
        --config or $INTERACTIVED_CONFIG name another file.
        """)
    page.paragraph("""
        The effective configuration is made of layers, each above the one before: the defaults, this file, \
        the runtime values set with 'interactivectl config set' (config.set, kept in the state directory \
        across restarts), and the daemon's command-line flags. A key set by a flag cannot be changed at \
        runtime: config.set refuses it and names the flag. Objects (viewport, reconnect) merge member by member.
        """)
    page.paragraph("""
        SIGHUP (systemctl reload) reads the file again; an invalid file keeps the old configuration. \
        'interactivectl config get' shows the effective values. A live room needs tenant, os, socketUrl and \
        apiUrl; a VOD room tenant, os and apiUrl.
        """)
    page.section("Keys")
    for key in ConfigReference.keys {
        var facts = ["default: \(key.defaultText)", key.runtime ? "runtime: yes (config set)" : "runtime: no (file or flag only)"]
        if let flag = key.flag { facts.append("flag: \(flag)") }
        page.item(key.name, key.meaning + "\n\n" + facts.joined(separator: "; ") + ".")
    }
    page.section("Example")
    page.literal("""
        {
          "environment": "prod",
          "tenant": "onlivev2",
          "os": "linuxstb",
          "viewport": {"width": 1920, "height": 1080},
          "reconnect": {"baseMs": 500, "capMs": 30000, "factor": 2}
        }
        """)
    page.section("See also")
    page.paragraph("interactived(8), interactivectl(1)")
    return page.text
}

let pages = ["interactived.8": daemonPage, "interactived.conf.5": configurationPage]
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 1, let name = arguments.first, let make = pages[name] else {
    let usage = Array("usage: interactived-manpages \(pages.keys.sorted().joined(separator: "|"))\n".utf8)
    _ = usage.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(64)
}
print(make(), terminator: "")
