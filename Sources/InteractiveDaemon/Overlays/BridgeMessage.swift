import IPCProtocol
import JSONValue

/// What a web template posted (`{type, data}`), as an object or as the JSON string it posted.
struct BridgeMessage: Sendable, Equatable {
    typealias Kind = BridgeMessageType

    let type: String
    let data: JSONValue

    var kind: Kind? { Kind(rawValue: type) }

    /// nil when the message has no `type`.
    init?(_ message: JSONValue) {
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

    /// For an action report that is an ad click (`action: CLICK_ADS`), the URL to open.
    var adURL: String? {
        guard kind == .actionReport, data["action"]?.stringValue == "CLICK_ADS" else { return nil }
        return data["url"]?.stringValue.flatMap { PlayerURL.isLoadable($0) ? $0 : nil }
    }
}
