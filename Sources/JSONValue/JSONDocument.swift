/// Where one value lies in a `JSONDocument`'s bytes.
public struct JSONSpan: Sendable, Equatable {
    public let range: Range<Int>
}

/// A JSON document checked once and then read in parts: the members of an object and the
/// elements of an array are found as byte ranges, and only the parts a reader asks for become
/// `JSONValue`s.
///
/// A `JSONValue` tree costs 10 to 30 times its text (a one-member object is a dictionary of
/// about 150 bytes), so a reply of which a reader needs a few members, or one element at a
/// time, is read this way: its memory stays the bytes, the spans asked for and the values
/// built. Checking follows `JSONValue.parse` exactly (the same grammar, UTF-8 and depth rules):
/// a document that `parse` refuses is refused here.
public struct JSONDocument: Sendable {
    public let bytes: [UInt8]
    /// The document's value (its white space around it excluded).
    public let root: JSONSpan
    private let maxDepth: Int

    /// Checks `bytes` as one JSON document; nesting is limited to `maxDepth`.
    public init(validating bytes: [UInt8], maxDepth: Int = 256) throws(JSONParseError) {
        let root = try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) -> JSONSpan in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            parser.skipWhitespace()
            let start = parser.index
            try parser.skipValue()
            let end = parser.index
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.fail("unexpected data after the document") }
            return JSONSpan(range: start..<end)
        }
        self.bytes = bytes
        self.root = root
        self.maxDepth = maxDepth
    }

    /// What kind of value a span holds.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    public func kind(of span: JSONSpan) -> Kind {
        switch bytes[span.range.lowerBound] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        default: return .number
        }
    }

    /// The value at `span`, built.
    public func value(_ span: JSONSpan) -> JSONValue {
        // The span was checked with the document; a failure here cannot happen.
        (try? JSONValue.parse(bytes[span.range], maxDepth: maxDepth)) ?? .null
    }

    /// The member `key` of the object at `span` (the last one when a key repeats, as `parse`
    /// keeps it); nil when absent or when `span` is not an object.
    public func member(_ key: String, of span: JSONSpan) -> JSONSpan? {
        var found: JSONSpan?
        forEachMember(of: span) { name, value in
            if name == key { found = value }
            return true
        }
        return found
    }

    /// The members of the object at `span`, in order; nil when it is not an object.
    public func members(of span: JSONSpan) -> [(key: String, value: JSONSpan)]? {
        guard kind(of: span) == .object else { return nil }
        var members: [(key: String, value: JSONSpan)] = []
        forEachMember(of: span) { name, value in
            members.append((name, value))
            return true
        }
        return members
    }

    /// The elements of the array at `span`, the first `limit` of them; nil when it is not an array.
    public func elements(of span: JSONSpan, limit: Int = .max) -> [JSONSpan]? {
        guard kind(of: span) == .array else { return nil }
        var elements: [JSONSpan] = []
        forEachElement(of: span) { element in
            guard elements.count < limit else { return false }
            elements.append(element)
            return true
        }
        return elements
    }

    /// The number of elements of the array at `span` (0 when it is not an array).
    public func count(of span: JSONSpan) -> Int {
        var count = 0
        forEachElement(of: span) { _ in
            count += 1
            return true
        }
        return count
    }

    /// Calls `body` with each element of the array at `span` until it returns false.
    public func forEachElement(of span: JSONSpan, _ body: (JSONSpan) -> Bool) {
        guard kind(of: span) == .array else { return }
        walk(span, members: false) { _, element in body(element) }
    }

    /// Calls `body` with each member of the object at `span` until it returns false.
    public func forEachMember(of span: JSONSpan, _ body: (String, JSONSpan) -> Bool) {
        guard kind(of: span) == .object else { return }
        walk(span, members: true) { name, value in body(name ?? "", value) }
    }

    /// Steps through the container at `span` (checked already), handing each member's name
    /// (objects) and value span to `body` until it returns false.
    private func walk(_ span: JSONSpan, members: Bool, _ body: (String?, JSONSpan) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
            parser.index = span.range.lowerBound + 1
            let close = members ? UInt8(ascii: "}") : UInt8(ascii: "]")
            while parser.index < span.range.upperBound {
                parser.skipWhitespace()
                guard parser.index < span.range.upperBound, buffer[parser.index] != close else { return }
                var name: String?
                if members {
                    guard let key = try? parser.parseString() else { return }
                    name = key
                    parser.skipWhitespace()
                    parser.index += 1  // ':'
                    parser.skipWhitespace()
                }
                let start = parser.index
                guard (try? parser.skipValue()) != nil else { return }
                guard body(name, JSONSpan(range: start..<parser.index)) else { return }
                parser.skipWhitespace()
                parser.index += 1  // ',' or the closing bracket
            }
        }
    }
}
