extension JSONValue {
    /// The exact text of a number that is a member of the top-level object in `text` (valid
    /// JSON), e.g. `12345678901234567890` for `{"id":12345678901234567890}`. A `.number` holds a
    /// Double, which cannot carry every integer above 2^53; this keeps what was sent. Nil when
    /// the member is missing, not a number, or its key is written with escapes.
    public static func numberLiteral<Bytes: Collection<UInt8>>(ofMember name: String, in text: Bytes) -> [UInt8]? {
        let key = Array("\"\(name)\"".utf8)
        let bytes = Array(text)
        var depth = 0
        var index = 0
        var found: [UInt8]?
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                guard depth == 1, bytes[start..<min(index, bytes.count)].elementsEqual(key) else { continue }
                var cursor = index
                while cursor < bytes.count, isBlank(bytes[cursor]) { cursor += 1 }
                guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else { continue }  // a value, not a key
                cursor += 1
                while cursor < bytes.count, isBlank(bytes[cursor]) { cursor += 1 }
                let literalStart = cursor
                while cursor < bytes.count, isNumberByte(bytes[cursor]) { cursor += 1 }
                found = cursor > literalStart ? Array(bytes[literalStart..<cursor]) : nil
                index = cursor
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            default:
                index += 1
            }
        }
        return found
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }
}
