import JSONValue

/// A JSON-RPC 2.0 error object.
public struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The stable dotted name of a daemon error (`error.data.name`), if any.
    public var name: String? { data?["name"]?.stringValue }

    public var description: String {
        if let name { return "\(message) (\(name))" }
        return "\(message) (code \(code))"
    }

    public var json: JSONValue {
        var members: JSONObject = ["code": .number(Double(code)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    public init?(json: JSONValue) {
        guard let code = json["code"]?.intValue, let message = json["message"]?.stringValue else { return nil }
        self.init(code: code, message: message, data: json["data"])
    }
}

/// The standard JSON-RPC 2.0 error codes and the daemon's own code.
public enum RPCErrorCode {
    public static let parseError = -32700
    public static let invalidRequest = -32600
    public static let methodNotFound = -32601
    public static let invalidParams = -32602
    public static let internalError = -32603
    /// Every daemon error: `error.data.name` says which.
    public static let daemonError = -32000
}

/// The stable names of the daemon's own errors (`error.data.name`).
public enum DaemonErrorName: String, Sendable, CaseIterable {
    case notConfigured = "interactive.NotConfigured"
    case notLoggedIn = "interactive.NotLoggedIn"
    case noRoom = "interactive.NoRoom"
    case backendUnreachable = "interactive.BackendUnreachable"
    case backendRefused = "interactive.BackendRefused"
    case permissionDenied = "interactive.PermissionDenied"
    case unknownOverlay = "interactive.UnknownOverlay"
    case tooManyClients = "interactive.TooManyClients"
    case scenarioUnavailable = "interactive.ScenarioUnavailable"
    /// A device value from the player's SDK is unusable; `data.field` names it.
    case invalidDeviceValues = "interactive.InvalidDeviceValues"
    /// The voice media process cannot run (an element, the audio device or a pipeline); `data.reason` says why.
    case voiceUnavailable = "interactive.VoiceUnavailable"
    /// A configuration file a reload was asked to apply is refused; `data.key` names the key.
    case configRejected = "interactive.ConfigRejected"
}

extension RPCError {
    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: RPCErrorCode.parseError, message: "Parse error: \(detail)")
    }

    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: RPCErrorCode.invalidRequest, message: "Invalid Request: \(detail)")
    }

    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: RPCErrorCode.methodNotFound, message: "Method not found: \(method)")
    }

    public static func invalidParams(_ detail: String) -> RPCError {
        RPCError(code: RPCErrorCode.invalidParams, message: "Invalid params: \(detail)")
    }

    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: RPCErrorCode.internalError, message: "Internal error: \(detail)")
    }

    /// A daemon error with its stable name and optional extra data members.
    public static func daemon(_ name: DaemonErrorName, _ message: String, extra: JSONObject = [:]) -> RPCError {
        var data = extra
        data["name"] = .string(name.rawValue)
        return RPCError(code: RPCErrorCode.daemonError, message: message, data: .object(data))
    }
}
