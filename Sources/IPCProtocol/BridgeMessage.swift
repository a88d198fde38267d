import JSONValue

/// What a web template posted (`{type, data}`), read from `overlay.bridge`'s `message`: the
/// object, or the JSON text the template passed to `postMessage`.
public struct BridgeMessage: Sendable, Equatable {
    public typealias Kind = BridgeMessageType

    public let type: String
    /// `data`, itself read as JSON when it is the text of an object.
    public let data: JSONValue

    /// nil for a type this protocol does not know.
    public var kind: Kind? { Kind(rawValue: type) }

    public init(type: String, data: JSONValue) {
        self.type = type
        self.data = data
    }

    /// The message as an object.
    public var json: JSONValue { ["type": .string(type), "data": data] }

    /// nil when the message has no `type`.
    public init?(_ message: JSONValue) {
        var value = message
        if case .string(let text) = message {
            guard let parsed = try? JSONValue.parse(text) else { return nil }
            value = parsed
        }
        guard let type = value["type"]?.stringValue else { return nil }
        self.type = type
        var data = value["data"] ?? .null
        if case .string(let text) = data, let parsed = try? JSONValue.parse(text), case .object = parsed {
            data = parsed
        }
        self.data = data
    }
}
