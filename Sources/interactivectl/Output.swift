import Glibc
import JSONValue

/// Writes results for people (aligned text, colour on a terminal) or for programs (`--json`).
struct Output: Sendable {
    let json: Bool
    let colour: Bool

    init(json: Bool, environment: [String: String]) {
        self.json = json
        let noColour = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        colour = !json && !noColour && isatty(STDOUT_FILENO) == 1 && environment["TERM"] != "dumb"
    }

    func line(_ text: String) { Output.write(text + "\n", to: STDOUT_FILENO) }

    func emit(_ value: JSONValue) { line(value.jsonText) }

    func bold(_ text: String) -> String { colour ? "\u{1B}[1m\(text)\u{1B}[0m" : text }
    func dim(_ text: String) -> String { colour ? "\u{1B}[2m\(text)\u{1B}[0m" : text }
    func green(_ text: String) -> String { colour ? "\u{1B}[32m\(text)\u{1B}[0m" : text }
    func yellow(_ text: String) -> String { colour ? "\u{1B}[33m\(text)\u{1B}[0m" : text }
    func red(_ text: String) -> String { colour ? "\u{1B}[31m\(text)\u{1B}[0m" : text }

    /// A note on standard error (progress, reconnections), in every mode: standard output keeps
    /// only results.
    func note(_ text: String) { Output.errorLine(text) }

    /// A failure: `interactivectl: MESSAGE` for people, `{"error":{…}}` for programs, on standard error.
    func failure(_ failure: CommandFailure, hint: String?) {
        guard json else {
            Output.errorLine(failure.message)
            if let hint { Output.write(hint + "\n", to: STDERR_FILENO) }
            return
        }
        var error: JSONObject = ["message": .string(failure.message), "exitStatus": .number(Double(failure.status.rawValue))]
        if let rpc = failure.rpc { error["daemonError"] = rpc.json }
        if let result = failure.result { error["result"] = result }
        Output.write(JSONValue.object(["error": .object(error)]).jsonText + "\n", to: STDERR_FILENO)
    }

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

    /// `text` padded with spaces to `width` characters (never cut).
    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func errorLine(_ text: String) { write("interactivectl: " + text + "\n", to: STDERR_FILENO) }

    /// Writes all of `text` to a file descriptor (retrying short writes and EINTR).
    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
