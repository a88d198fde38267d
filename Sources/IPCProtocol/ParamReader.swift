import JSONValue

/// Checked access to a request's `params`, with `-32602 Invalid params` errors that name the
/// field. The typed params (`MethodParams.swift`) read through it, in the daemon and in tests.
public struct ParamReader: Sendable {
    public let members: JSONObject

    /// Refuses params that are neither absent, null nor an object.
    public init(_ params: JSONValue?) throws(RPCError) {
        switch params {
        case nil, .null?: members = [:]
        case .object(let object)?: members = object
        default: throw RPCError.invalidParams("params must be an object")
        }
    }

    public func string(_ name: String) throws(RPCError) -> String {
        guard let value = try optionalString(name) else { throw RPCError.invalidParams("'\(name)' is required") }
        return value
    }

    public func optionalString(_ name: String) throws(RPCError) -> String? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let text = value.stringValue ?? (value.doubleValue != nil ? value.idString : nil), !text.isEmpty else {
            throw RPCError.invalidParams("'\(name)' must be a non-empty string")
        }
        try Self.refuseControlCharacters(text, name)
        return text
    }

    public func number(_ name: String) throws(RPCError) -> Double {
        guard let value = try optionalNumber(name) else { throw RPCError.invalidParams("'\(name)' is required") }
        return value
    }

    public func optionalNumber(_ name: String) throws(RPCError) -> Double? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let number = value.doubleValue, number.isFinite else { throw RPCError.invalidParams("'\(name)' must be a number") }
        return number
    }

    public func optionalInt(_ name: String, range: ClosedRange<Int>) throws(RPCError) -> Int? {
        guard let number = try optionalNumber(name) else { return nil }
        guard number.rounded() == number, let int = Int(exactly: number), range.contains(int) else {
            throw RPCError.invalidParams("'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return int
    }

    public func optionalBool(_ name: String) throws(RPCError) -> Bool? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw RPCError.invalidParams("'\(name)' must be true or false") }
        return flag
    }

    public func oneOf(_ name: String, _ allowed: [String], default fallback: String? = nil) throws(RPCError) -> String {
        guard let text = try optionalString(name) ?? fallback else { throw RPCError.invalidParams("'\(name)' is required") }
        guard allowed.contains(text) else {
            throw RPCError.invalidParams("'\(name)' must be one of \(allowed.joined(separator: ", "))")
        }
        return text
    }

    /// One of an enumeration's values, named by its raw value (listed in declaration order when refused).
    public func oneOf<Value: RawRepresentable & CaseIterable>(_ name: String, _: Value.Type, default fallback: Value? = nil)
        throws(RPCError) -> Value where Value.RawValue == String
    {
        let text = try oneOf(name, Value.allCases.map(\.rawValue), default: fallback?.rawValue)
        guard let value = Value(rawValue: text) else { throw RPCError.invalidParams("'\(name)' is not understood") }
        return value
    }

    public func optionalStringArray(_ name: String) throws(RPCError) -> [String]? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let array = value.arrayValue else { throw RPCError.invalidParams("'\(name)' must be an array of strings") }
        var strings: [String] = []
        for element in array {
            guard let text = element.stringValue else { throw RPCError.invalidParams("'\(name)' must be an array of strings") }
            try Self.refuseControlCharacters(text, name)
            strings.append(text)
        }
        return strings
    }

    /// A member that must be present, whatever its type (checked by the caller).
    public func required(_ name: String) throws(RPCError) -> JSONValue {
        guard let value = members[name], !value.isNull else { throw RPCError.invalidParams("'\(name)' is required") }
        return value
    }

    /// Strings reach headers (the token), URLs and log lines: a line break or NUL in one could
    /// forge a header or a log record, so such text is refused rather than passed on.
    private static func refuseControlCharacters(_ text: String, _ name: String) throws(RPCError) {
        guard !text.containsControlCharacters else {
            throw RPCError.invalidParams("'\(name)' must not contain control characters (line breaks, NUL, …)")
        }
    }
}
