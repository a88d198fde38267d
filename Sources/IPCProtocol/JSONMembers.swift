import JSONValue

extension JSONObject {
    /// Sets the member when there is a value: for members a message writes only when present.
    mutating func setIfPresent(_ name: String, _ value: JSONValue?) {
        if let value { self[name] = value }
    }
}
