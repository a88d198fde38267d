import JSONValue

extension IPCClient {
    /// Calls the method of `params` and reads the reply as its typed result; a result that does
    /// not read is `.protocolViolation`.
    public func call<Params: MethodParams>(_ params: Params, timeoutMs: Int = 10_000) throws(IPCClientError) -> Params.Result {
        try Self.decode(Params.self, try call(Params.method.rawValue, params.params, timeoutMs: timeoutMs))
    }

    /// Reads a reply's result as the typed result of `Params`' method.
    public static func decode<Params: MethodParams>(_: Params.Type, _ reply: JSONValue) throws(IPCClientError) -> Params.Result {
        guard let result = Params.Result(json: reply) else {
            throw .protocolViolation("\(Params.method.rawValue) replied \(reply.jsonText.prefix(200))")
        }
        return result
    }
}
