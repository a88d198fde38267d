import Foundation
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// Writes results for people (aligned text, colour on a terminal) or for programs (`--json`).
struct Output: Sendable {
    let json: Bool
    let colour: Bool

    init(json: Bool, environment: [String: String]) {
        self.json = json
        let noColour = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        colour = !json && !noColour && isatty(STDOUT_FILENO) == 1 && environment["TERM"] != "dumb"
    }

    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func emit(_ value: JSONValue) { line(value.jsonText) }

    func bold(_ text: String) -> String { colour ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    func dim(_ text: String) -> String { colour ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
    func green(_ text: String) -> String { colour ? "\u{1B}[32m\(text)\u{1B}[0m" : text }
    func yellow(_ text: String) -> String { colour ? "\u{1B}[33m\(text)\u{1B}[0m" : text }
    func red(_ text: String) -> String { colour ? "\u{1B}[31m\(text)\u{1B}[0m" : text }

    /// A value for people: strings bare, everything else as compact JSON.
    static func plain(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: return "-"
        case .string(let text)?: return text
        case let other?: return other.jsonText
        }
    }

    /// `key=value` pairs of an object, in key order.
    static func pairs(_ value: JSONValue) -> String {
        guard case .object(let members) = value else { return plain(value) }
        return members.keys.sorted().map { "\($0)=\(plain(members[$0]))" }.joined(separator: " ")
    }

    static func errorLine(_ text: String) {
        FileHandle.standardError.write(Data(("interactivectl: " + text + "\n").utf8))
    }
}
