/// A JSON document as a value tree.
///
/// Shared by the local API (IPC), the Socket.IO client and the daemon. Numbers are kept as
/// `Double` (exact for integers up to 2^53, which covers millisecond timestamps and ids);
/// integral numbers are written without a fraction.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// The member `key` of an object, or nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The number as an `Int` when it is integral and in range.
    public var intValue: Int? {
        guard case .number(let n) = self, n.rounded() == n, abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// An identifier given either as a string or as an integral number (backends send both).
    public var idString: String? {
        switch self {
        case .string(let s): return s.isEmpty ? nil : s
        case .number: return intValue.map(String.init)
        default: return nil
        }
    }

    /// A number given either as a JSON number or as a numeric string.
    public var lenientDouble: Double? {
        switch self {
        case .number(let n): return n
        case .string(let s): return Double(s.filter { $0 != " " })
        default: return nil
        }
    }

    /// A boolean given as a JSON bool, a number (0/1) or a string ("true"/"false").
    public var lenientBool: Bool? {
        switch self {
        case .bool(let b): return b
        case .number(let n): return n != 0
        case .string(let s):
            switch s.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: return nil
            }
        default: return nil
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(uniquing: elements.lazy.map { (key: $0.0, value: $0.1) }))
    }
}

extension JSONValue {
    /// `.string` for a non-nil value, `.null` otherwise.
    public init(_ string: String?) { self = string.map(JSONValue.string) ?? .null }
    /// `.number` for a non-nil value, `.null` otherwise.
    public init(_ int: Int?) { self = int.map { .number(Double($0)) } ?? .null }
    /// `.number` for a non-nil value, `.null` otherwise.
    public init(_ double: Double?) { self = double.map(JSONValue.number) ?? .null }
}
