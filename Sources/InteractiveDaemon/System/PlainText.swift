import IPCProtocol

/// Small text helpers the daemon needs without Foundation's NSString API.
extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    var trimmedOfBlanks: String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}

/// The folder part of a path (`/run/x/y.sock` → `/run/x`); empty for a bare name.
func parentFolder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// Text that came from a peer (the backend, a player), made safe for one log line, a status
/// field or an event: control characters escaped (`\n`, `\u{1B}`) and the text cut to `limit`
/// characters, with a note of how many were left out.
enum PeerText {
    /// How much of a peer's text the daemon repeats (docs/ipc.md, "Limits").
    static let limit = 512

    static func clipped<S: StringProtocol>(_ text: S, limit: Int = PeerText.limit) -> String {
        // Short printable ASCII, which almost every log line and field is, is kept as it is
        // (escaping scalar by scalar was 6 % of the daemon's instructions per overlay).
        if text.utf8.count <= limit, isPrintableASCII(text.utf8) { return String(text) }
        var out = ""
        var kept = 0
        var dropped = 0
        for scalar in text.unicodeScalars {
            guard kept < limit else {
                dropped += 1
                continue
            }
            kept += 1
            guard scalar.isControlCharacter else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        if dropped > 0 { out += "… (\(dropped) more characters)" }
        return out
    }

    /// Whether every byte is printable ASCII (0x20–0x7E), read in place when the text is
    /// contiguous (a native string): a scan of the UTF-8 view byte by byte cost 7 instructions
    /// a byte, a third of them here.
    static func isPrintableASCII(_ bytes: some Sequence<UInt8>) -> Bool {
        let printable: (UInt8) -> Bool = { $0 >= 0x20 && $0 < 0x7F }
        return bytes.withContiguousStorageIfAvailable { buffer in
            var index = 0
            while index < buffer.count {
                guard printable(buffer[index]) else { return false }
                index += 1
            }
            return true
        } ?? bytes.allSatisfy(printable)
    }
}
