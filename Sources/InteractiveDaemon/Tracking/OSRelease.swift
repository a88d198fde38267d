/// The operating system's name and version from os-release(5), for tracking's `clientContext.os`.
enum OSRelease {
    static let defaultPaths = ["/etc/os-release", "/usr/lib/os-release"]

    /// The name of this system (e.g. "Debian GNU/Linux 12"); "Linux" when no file can be read.
    static func systemName(paths: [String] = defaultPaths) -> String {
        for path in paths {
            if let data = LocalFiles.contents(atPath: path) { return name(fromContents: String(decoding: data, as: UTF8.self)) }
        }
        return "Linux"
    }

    /// `NAME VERSION_ID`, else `PRETTY_NAME` without a codename in parentheses, else `NAME`, else "Linux".
    static func name(fromContents text: String) -> String {
        let fields = fields(text)
        if let name = fields["NAME"], let version = fields["VERSION_ID"] { return "\(name) \(version)" }
        if let pretty = fields["PRETTY_NAME"] {
            let bare = pretty.firstIndex(of: "(").map { String(pretty[..<$0]) } ?? pretty
            let trimmed = bare.trimmedOfBlanks
            if !trimmed.isEmpty { return trimmed }
        }
        return fields["NAME"] ?? "Linux"
    }

    /// The `KEY=value` assignments, quotes and shell escapes removed; empty values are left out.
    static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmedOfBlanks
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            let value = unquote(line[line.index(after: equals)...])
            if !key.isEmpty, !value.isEmpty { fields[key] = value }
        }
        return fields
    }

    /// Removes surrounding single or double quotes and backslash escapes.
    private static func unquote(_ raw: Substring) -> String {
        var value = raw
        if let first = value.first, first == "\"" || first == "'", value.count >= 2, value.last == first {
            value = value.dropFirst().dropLast()
        }
        var result = ""
        var escaped = false
        for character in value {
            if character == "\\", !escaped {
                escaped = true
                continue
            }
            result.append(character)
            escaped = false
        }
        return result
    }
}
