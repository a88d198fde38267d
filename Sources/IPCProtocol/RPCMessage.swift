import JSONValue

/// A request or notification sent by a client.
public struct RPCRequest: Sendable, Equatable {
    /// nil for a notification (no reply is sent).
    public var id: JSONValue?
    /// The id's text as sent, when it is a number a Double does not hold exactly (above 2^53,
    /// or with digits a Double rounds): replies echo it unchanged.
    public var idLiteral: [UInt8]?
    public var method: String
    public var params: JSONValue?

    public init(id: JSONValue?, idLiteral: [UInt8]? = nil, method: String, params: JSONValue? = nil) {
        self.id = id
        self.idLiteral = idLiteral
        self.method = method
        self.params = params
    }

    public var isNotification: Bool { id == nil }

    public var json: JSONValue {
        var members: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
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
    /// The request's id as sent, written instead of `id` (see `RPCRequest.idLiteral`).
    public var idLiteral: [UInt8]?
    public var outcome: Result<JSONValue, RPCError>

    public init(id: JSONValue, idLiteral: [UInt8]? = nil, outcome: Result<JSONValue, RPCError>) {
        self.id = id
        self.idLiteral = idLiteral
        self.outcome = outcome
    }

    public var json: JSONValue {
        var members: JSONObject = ["jsonrpc": "2.0", "id": id]
        switch outcome {
        case .success(let result): members["result"] = result
        case .failure(let error): members["error"] = error.json
        }
        return .object(members)
    }

    /// The response as one JSON line, newline included. Members in key order, as the
    /// serializer writes them, also when the id is written as it was sent.
    public func line() -> [UInt8] {
        guard let idLiteral else { return json.serialized() + [0x0A] }
        var out = Array("{".utf8)
        if case .failure(let error) = outcome {
            out += "\"error\":".utf8
            error.json.write(to: &out)
            out += ",".utf8
        }
        out += "\"id\":".utf8 + idLiteral + ",\"jsonrpc\":\"2.0\"".utf8
        if case .success(let result) = outcome {
            out += ",\"result\":".utf8
            result.write(to: &out)
        }
        out += "}\n".utf8
        return out
    }
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
        let decoded = decode(value)
        guard case .number(let number)? = value["id"], let literal = JSONValue.numberLiteral(ofMember: "id", in: line),
              literal != JSONValue.number(number).serialized() else { return decoded }
        switch decoded {
        case .success(.request(var request)):
            request.idLiteral = literal
            return .success(.request(request))
        case .failure(var failure):
            failure.idLiteral = literal
            return .failure(failure)
        default:
            return decoded
        }
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
    /// The id as sent, when a Double does not hold it exactly (see `RPCRequest.idLiteral`).
    public var idLiteral: [UInt8]?
    public var error: RPCError

    public init(id: JSONValue, idLiteral: [UInt8]? = nil, error: RPCError) {
        self.id = id
        self.idLiteral = idLiteral
        self.error = error
    }
}
