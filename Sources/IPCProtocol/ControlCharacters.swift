extension Unicode.Scalar {
    /// C0 controls, DEL, C1 controls and the Unicode line and paragraph separators: characters
    /// that can end a log line, a header or a terminal's sanity.
    public var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
    }
}

extension StringProtocol {
    /// True when the text holds a control character (see `Unicode.Scalar.isControlCharacter`).
    public var containsControlCharacters: Bool { unicodeScalars.contains(where: \.isControlCharacter) }
}
