extension JSONValue {
    /// The compact JSON text of this value, as UTF-8 bytes. Object members are written in key
    /// order so that output is stable.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(to: &out)
        return out
    }

    /// The compact JSON text of this value.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    /// How many bytes `serialized()` returns, counted without writing them (a size check on the
    /// display path need not build the text).
    public var serializedByteCount: Int {
        switch self {
        case .null: return 4
        case .bool(let b): return b ? 4 : 5
        case .number(let n):
            guard n.isFinite else { return 4 }
            if n.rounded() == n, abs(n) <= 9_007_199_254_740_992 {
                var magnitude = Int64(n).magnitude
                var count = n < 0 ? 2 : 1
                while magnitude >= 10 {
                    magnitude /= 10
                    count += 1
                }
                return count
            }
            return "\(n)".utf8.count
        case .string(let s): return JSONValue.stringLiteralByteCount(s)
        case .array(let elements):
            return elements.reduce(2 + max(0, elements.count - 1)) { $0 + $1.serializedByteCount }
        case .object(let members):
            return members.reduce(2 + max(0, members.count - 1)) { total, member in
                total + JSONValue.stringLiteralByteCount(member.key) + 1 + member.value.serializedByteCount
            }
        }
    }

    /// The bytes `writeString` writes for `s`: the quotes, and each escape's length.
    static func stringLiteralByteCount(_ s: String) -> Int {
        var count = 2
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: count += 2
            case 0..<0x20: count += 6
            default: count += 1
            }
        }
        return count
    }

    /// Appends the compact JSON text of this value to `out`.
    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): JSONValue.writeNumber(n, to: &out)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Keys in order, so the same value is always written the same way.
            let sorted = members.sorted { $0.key < $1.key }
            for (offset, member) in sorted.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    public static func writeNumber(_ n: Double, to out: inout [UInt8]) {
        guard n.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        // Integral values that a Double holds exactly (|n| ≤ 2^53) are written as integers.
        if n.rounded() == n, abs(n) <= 9_007_199_254_740_992 {
            writeInteger(Int64(n), to: &out)
        } else {
            out.append(contentsOf: "\(n)".utf8)
        }
    }

    /// Decimal digits without going through `String`.
    public static func writeInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var count = 1
        var scale: UInt64 = 10
        while count < 20 && magnitude >= scale {
            count += 1
            scale &*= 10
        }
        // The digits are written in place, last first: no buffer of their own.
        let end = out.count + count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
        var index = end
        repeat {
            index -= 1
            out[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
    }

    /// Appends `s` as a JSON string literal.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        // Native strings are contiguous UTF-8: read in place, no copy.
        let copied = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !needsEscaping(bytes) else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return true
        }
        // A string not stored as contiguous UTF-8 goes byte by byte.
        if copied != true { writeEscaped(s, to: &out) }
    }

    /// Whether any byte is a control character, a quote or a backslash: eight bytes at a time
    /// (most strings need no escaping, and overlays carry long ones).
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        anyByte(of: bytes) { byte in byte < 0x20 || byte == 0x22 || byte == 0x5C } word: { word in
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            return belowSpace(word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
        }
    }

    /// Whether any byte is below 0x20. JSON text a parser accepted holds such bytes only as
    /// white space (tabs and line breaks); without them, it fits in a JSON line as it is.
    public static func containsControlBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        anyByte(of: bytes, { $0 < 0x20 }, word: belowSpace)
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101

    /// Sets the high bit of a byte (and maybe of bytes after it) when a byte of `word` is below
    /// 0x20: the classic "has a byte less than n" test; the "has a zero byte" test is its n = 1.
    private static func belowSpace(_ word: UInt64) -> UInt64 { (word &- ones &* 0x20) & ~word }

    /// Whether `test` holds for a byte, eight bytes at a time with `word` (a high bit set in its
    /// result means some byte matched; none set means none did) and the rest one by one.
    private static func anyByte(of bytes: UnsafeBufferPointer<UInt8>, _ test: (UInt8) -> Bool,
                                word: (UInt64) -> UInt64) -> Bool {
        var index = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count {
                if word(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) & 0x8080_8080_8080_8080 != 0 { return true }
                index += 8
            }
        }
        while index < bytes.count {
            if test(bytes[index]) { return true }
            index += 1
        }
        return false
    }

    private static func writeEscaped(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { jsonText }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? container.decode(Double.self) {
            self = .number(n)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .number(let n): try container.encode(n)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(Dictionary(o.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last }))
        }
    }
}

