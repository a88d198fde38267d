import JSONValue

/// A request or notification sent by a client.
public struct RPCRequest: Sendable, Equatable {
    /// nil for a notification (no reply is sent).
    public var id: JSONValue?
    public var method: String
    public var params: JSONValue?

    public init(id: JSONValue?, method: String, params: JSONValue? = nil) {
        self.id = id
        self.method = method
        self.params = params
    }

    public var isNotification: Bool { id == nil }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let id { members["id"] = id }
        if let params { members["params"] = params }
        return .object(members)
    }

    /// The request as one JSON line, newline included.
    public func line() -> [UInt8] { json.serialized() + [0x0A] }
}

/// A reply to a request.
public struct RPCResponse: Sendable, Equatable {
    public var id: JSONValue
    public var outcome: Result<JSONValue, RPCError>

    public init(id: JSONValue, outcome: Result<JSONValue, RPCError>) {
        self.id = id
        self.outcome = outcome
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["jsonrpc": "2.0", "id": id]
        switch outcome {
        case .success(let result): members["result"] = result
        case .failure(let error): members["error"] = error.json
        }
        return .object(members)
    }

    /// The response as one JSON line, newline included.
    public func line() -> [UInt8] { json.serialized() + [0x0A] }
}

/// Anything a peer may send on the socket, as decoded from one line.
public enum RPCIncoming: Sendable, Equatable {
    case request(RPCRequest)
    case response(RPCResponse)
    /// A server-to-client notification (`method` without `id`).
    case notification(method: String, params: JSONValue?)
}

extension RPCIncoming {
    /// Decodes one line. A failure carries the error to reply with and the id to reply to
    /// (`.null` when the id could not be read).
    public static func decode(line: some Collection<UInt8>) -> Result<RPCIncoming, RPCDecodeFailure> {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            return .failure(RPCDecodeFailure(id: .null, error: .parseError(error.description)))
        }
        return decode(value)
    }

    /// Decodes a parsed JSON-RPC message.
    public static func decode(_ value: JSONValue) -> Result<RPCIncoming, RPCDecodeFailure> {
        guard case .object(let members) = value else {
            if case .array = value {
                return .failure(RPCDecodeFailure(id: .null, error: .invalidRequest("batches are not supported")))
            }
            return .failure(RPCDecodeFailure(id: .null, error: .invalidRequest("a message must be a JSON object")))
        }
        let rawID = members["id"]
        let validID: JSONValue?
        switch rawID {
        case nil: validID = nil
        case .string?, .number?, .null?: validID = rawID
        default:
            return .failure(RPCDecodeFailure(id: .null, error: .invalidRequest("id must be a string, a number or null")))
        }
        guard members["jsonrpc"] == "2.0" else {
            return .failure(RPCDecodeFailure(id: validID ?? .null, error: .invalidRequest("jsonrpc must be \"2.0\"")))
        }
        if let methodValue = members["method"] {
            guard let method = methodValue.stringValue, !method.isEmpty else {
                return .failure(RPCDecodeFailure(id: validID ?? .null, error: .invalidRequest("method must be a non-empty string")))
            }
            let params = members["params"]
            switch params {
            case nil, .object?, .array?: break
            default:
                return .failure(RPCDecodeFailure(id: validID ?? .null, error: .invalidRequest("params must be an object or an array")))
            }
            if let validID {
                return .success(.request(RPCRequest(id: validID, method: method, params: params)))
            }
            return .success(.notification(method: method, params: params))
        }
        if let validID {
            if let result = members["result"] {
                return .success(.response(RPCResponse(id: validID, outcome: .success(result))))
            }
            if let errorValue = members["error"], let error = RPCError(json: errorValue) {
                return .success(.response(RPCResponse(id: validID, outcome: .failure(error))))
            }
        }
        return .failure(RPCDecodeFailure(id: validID ?? .null, error: .invalidRequest("neither a request nor a response")))
    }
}

/// A line that is not a usable message, with the error reply it deserves.
public struct RPCDecodeFailure: Error, Sendable, Equatable {
    public var id: JSONValue
    public var error: RPCError
}
