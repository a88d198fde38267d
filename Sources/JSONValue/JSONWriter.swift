/// Writes compact JSON text straight into bytes, member by member, for what is encoded on the
/// daemon's hot path (an `emit-ack` payload is built once, as text): no `JSONValue` tree, no
/// dictionary, no sorting. Members come out in the order they are written.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.member("stage", "received")
/// writer.key("timeline")
/// writer.beginObject()
/// writer.member("ackSent", 1_700_000_000_000)
/// writer.endObject()
/// writer.endObject()
/// // {"stage":"received","timeline":{"ackSent":1700000000000}}
/// ```
///
/// The writer does not check the shape it is given (a key outside an object, an unclosed
/// container): its callers are encoders with a fixed shape, which their tests check.
public struct JSONWriter: Sendable {
    /// The text written so far.
    public private(set) var bytes: [UInt8]
    /// Where the next byte goes (a value's range in the text, for a caller that patches it later).
    public var offset: Int { bytes.count }
    /// Whether the innermost open container has no member or element yet.
    private var empty = true

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Runs `write` with a writer that appends to `out` (the bytes are moved in and back, not copied).
    public static func append(to out: inout [UInt8], _ write: (inout JSONWriter) -> Void) {
        var writer = JSONWriter(capacity: 0)
        swap(&writer.bytes, &out)
        write(&writer)
        swap(&writer.bytes, &out)
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        empty = true
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        empty = false
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        empty = true
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        empty = false
    }

    /// A member's key; its value is what is written next.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        // The value after a key takes no comma.
        empty = true
    }

    public mutating func string(_ value: String) {
        separate()
        JSONValue.writeString(value, to: &bytes)
        empty = false
    }

    public mutating func integer(_ value: Int64) {
        separate()
        JSONValue.writeInteger(value, to: &bytes)
        empty = false
    }

    /// A number as `JSONValue.number(value)` writes it.
    public mutating func number(_ value: Double) {
        separate()
        JSONValue.writeNumber(value, to: &bytes)
        empty = false
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        empty = false
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        empty = false
    }

    /// A whole value, serialized as `JSONValue.serialized()` does.
    public mutating func value(_ value: JSONValue) {
        separate()
        value.write(to: &bytes)
        empty = false
    }

    /// Members written before as text (`"a":1,"b":2`, as a writer writes them in an object),
    /// added as they are to the open object.
    public mutating func members(_ text: [UInt8]) {
        guard !text.isEmpty else { return }
        separate()
        bytes.append(contentsOf: text)
        empty = false
    }

    /// JSON text written as it is (the caller guarantees it is one valid value).
    public mutating func json(_ text: [UInt8]) {
        separate()
        bytes.append(contentsOf: text)
        empty = false
    }

    // MARK: Members

    public mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    /// `null` when `value` is nil.
    public mutating func member(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    /// `null` when `value` is nil.
    public mutating func member(_ name: StaticString, _ value: Int64?) {
        key(name)
        if let value { integer(value) } else { null() }
    }

    public mutating func member(_ name: StaticString, _ value: Int) {
        key(name)
        integer(Int64(value))
    }

    public mutating func member(_ name: StaticString, _ value: Double) {
        key(name)
        number(value)
    }

    private mutating func separate() {
        if !empty { bytes.append(UInt8(ascii: ",")) }
    }
}
