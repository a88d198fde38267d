/// Why a byte sequence is not a JSON document.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset where parsing stopped.
    public let offset: Int
    public let reason: String

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Parses one JSON document (RFC 8259). Strings must be valid UTF-8; nesting is limited to
    /// `maxDepth`. Trailing bytes other than white space are an error.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maxDepth: Int = 256) throws(JSONParseError) -> JSONValue
    where Bytes.Element == UInt8 {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            return Result { () throws(JSONParseError) in try parser.parseDocument() }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            return try parser.parseDocument()
        }
    }

    /// Parses like `parse`, and tells where the root array's elements, and the members of those
    /// that are objects, lie in `bytes` (none when the root is not an array): a reader can relay
    /// a part's text as it came instead of writing its value again. Found during the one parse.
    public static func parseWithElementRanges<Bytes: Collection>(_ bytes: Bytes, maxDepth: Int = 256)
        throws(JSONParseError) -> (value: JSONValue, ranges: JSONElementRanges) where Bytes.Element == UInt8 {
        func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<(value: JSONValue, ranges: JSONElementRanges), JSONParseError> {
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            parser.recordsRanges = true
            // A Socket.IO event: a name and an argument or two, of a few members.
            parser.ranges.elements.reserveCapacity(4)
            parser.ranges.members.reserveCapacity(8)
            return Result { () throws(JSONParseError) in (try parser.parseDocument(), parser.ranges) }
        }
        if let result = bytes.withContiguousStorageIfAvailable(run) { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer(run).get()
    }

    /// Parses a JSON document held in a string.
    public static func parse(_ text: String, maxDepth: Int = 256) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

/// The one JSON grammar: `parseDocument` builds the value; `skipValue` checks a value by the same
/// rules without building anything (JSONDocument.swift).
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// Whether `ranges` are recorded (the root being an array).
    var recordsRanges = false
    var ranges = JSONElementRanges()
    /// The members of the objects being parsed, innermost last: an object's members are
    /// gathered here and become its `JSONObject` at its `}`, made with room for all of them.
    private var openMembers: [JSONObject.Member] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        if index < bytes.count, bytes[index] != UInt8(ascii: "[") { recordsRanges = false }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the document") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected character")
        }
    }

    /// `true`, `false` or `null`, byte by byte (read through a `String`'s UTF-8 view, a literal cost three times as much).
    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = literal.utf8Start
        for offset in 0..<literal.utf8CodeUnitCount {
            guard index < bytes.count else { throw fail("unexpected end of input") }
            guard bytes[index] == expected[offset] else { throw fail("invalid literal") }
            index += 1
        }
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        guard depth <= maxDepth else { throw fail("nesting deeper than \(maxDepth)") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // Room for 16 members of the objects open at once, allocated once per document: 640
        // bytes, a size malloc serves from its per-thread cache (32 members took its slower
        // path for every document, a one-member ack reply's too; an overlay grows it once).
        if openMembers.capacity == 0 { openMembers.reserveCapacity(16) }
        let firstMember = openMembers.count
        defer { openMembers.removeSubrange(firstMember...) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            let start = index
            openMembers.append(JSONObject.Member(key: key, value: try parseValue()))
            // A member of an object that is an element of the root array (the element being
            // parsed is the next to be recorded).
            if recordsRanges, depth == 2 {
                ranges.members.append(JSONElementRanges.Member(element: ranges.elements.count, key: key, range: start..<index))
            }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                // A repeated key keeps its last value.
                return .object(JSONObject(parsed: openMembers[firstMember...]))
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            let start = index
            elements.append(try parseValue())
            if recordsRanges, depth == 1 { ranges.elements.append(start..<index) }
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw fail("unexpected end of input") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw fail("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if let value = exactValue(ofNumberIn: start..<index) { return value }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return value
    }

    /// The value of a number without an exponent and with at most 15 digits, computed without
    /// going through text: its digits as an integer are exact in a `Double`, and so is a power
    /// of ten up to 10^22, so one division rounds correctly (Clinger's fast path). Nil otherwise.
    func exactValue(ofNumberIn range: Range<Int>) -> Double? {
        var digits: Int64 = 0
        var digitCount = 0
        var fractionDigits = 0
        var inFraction = false
        var negative = false
        for position in range {
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): inFraction = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digitCount += 1
                guard digitCount <= 15 else { return nil }
                digits = digits * 10 + Int64(byte - UInt8(ascii: "0"))
                if inFraction { fractionDigits += 1 }
            default: return nil  // an exponent
            }
        }
        let magnitude = Double(digits) / Self.powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }

    /// 10^0 … 10^15, each exact in a `Double`.
    static let powersOfTen: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. ASCII text needs no UTF-8 validation (the generic
        // `String(validating:)` costs about a thousand instructions per string).
        var allASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let text: String
                if allASCII {
                    text = String(decoding: slice, as: UTF8.self)
                } else {
                    guard let valid = String(validating: slice, as: UTF8.self) else {
                        throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                    }
                    text = valid
                }
                index += 1
                return text
            }
            if byte >= 0x80 { allASCII = false }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        var scalars = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else {
                    throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"): appendUTF8(of: try parseUnicodeEscape(), to: &scalars)
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                scalars.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    // MARK: Checking without building

    /// Checks the value at `index` and moves past it, building nothing (but the `Double` of a
    /// number and a short-lived copy of a non-ASCII string, checked as UTF-8 and dropped).
    mutating func skipValue() throws(JSONParseError) {
        guard index < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): try skipContainer(close: UInt8(ascii: "}"), members: true)
        case UInt8(ascii: "["): try skipContainer(close: UInt8(ascii: "]"), members: false)
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func skipContainer(close: UInt8, members: Bool) throws(JSONParseError) {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == close {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            if members {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                try skipString()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
            }
            try skipValue()
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == close {
                index += 1
                return
            } else {
                throw fail(members ? "expected ',' or '}'" : "expected ',' or ']'")
            }
        }
    }

    /// A string's escapes are checked as `parseString` reads them; its raw bytes, when not all
    /// ASCII, are checked as UTF-8 (escapes are ASCII and decode to whole scalars, so the raw
    /// bytes are valid exactly when the decoded ones are).
    private mutating func skipString() throws(JSONParseError) {
        index += 1
        let start = index
        var allASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                if !allASCII, String(validating: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) == nil {
                    throw JSONParseError(offset: start, reason: "string is not valid UTF-8")
                }
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw fail("unexpected end of input") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"): _ = try parseUnicodeEscape()
                default: throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                if byte >= 0x80 { allASCII = false }
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("unexpected end of input") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail("lone surrogate in \\u escape")
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair") }
            let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail("invalid surrogate pair") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw fail("lone surrogate in \\u escape") }
        return scalar
    }

    func appendUTF8(of scalar: Unicode.Scalar, to buffer: inout [UInt8]) {
        UTF8.encode(scalar) { buffer.append($0) }
    }
}

/// Where the parts of a document whose root is an array lie in its bytes, as offsets from its
/// first byte (`JSONValue.parseWithElementRanges`).
public struct JSONElementRanges: Sendable, Equatable {
    /// A member of an element that is an object.
    public struct Member: Sendable, Equatable {
        public var element: Int
        public var key: String
        public var range: Range<Int>

        public init(element: Int, key: String, range: Range<Int>) {
            self.element = element
            self.key = key
            self.range = range
        }
    }

    /// Each element of the root array.
    public var elements: [Range<Int>] = []
    /// The members of the elements that are objects, in document order.
    public var members: [Member] = []

    public init(elements: [Range<Int>] = [], members: [Member] = []) {
        self.elements = elements
        self.members = members
    }

    /// Where member `key` of element `element` lies (the last when the key repeats, as `parse`
    /// keeps it); nil when absent.
    public func member(_ key: String, ofElement element: Int) -> Range<Int>? {
        members.last { $0.element == element && $0.key == key }?.range
    }
}
