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
