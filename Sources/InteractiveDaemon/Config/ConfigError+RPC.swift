import IPCProtocol
import JSONValue

extension ConfigError {
    /// The reply to a refused `config.set`: `-32602` naming the key in its message and in
    /// `data.key`; a key that a command-line flag sets also has `data.overriddenBy: "flag"` and
    /// `data.flag`, so that a client can tell the daemon's state from a bad value.
    var rpcError: RPCError {
        var data: JSONObject = [:]
        if let key { data["key"] = .string(key) }
        if case .overriddenByFlag(_, let flag) = self {
            data["overriddenBy"] = "flag"
            data["flag"] = .string(flag)
        }
        var error = RPCError.invalidParams(description)
        if !data.isEmpty { error.data = .object(data) }
        return error
    }
}
