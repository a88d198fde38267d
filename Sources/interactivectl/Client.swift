import IPCProtocol
import JSONValue

/// Opens the daemon connection for a command and maps client errors to exit statuses.
struct DaemonConnection {
    let client: IPCClient
    let path: String

    static let startHint = """
        Is interactived running? Start it with 'systemctl start interactived.socket' (installed units) or \
        'interactived --socket PATH', or point to it with --socket PATH or $INTERACTIVED_SOCKET.
        """

    init(socketFlag: String?, environment: [String: String]) throws(CommandFailure) {
        guard let path = SocketPath.forClient(explicit: socketFlag, environment: environment) else {
            throw CommandFailure(status: .unreachable, message: """
                no daemon socket found: /run/interactived/interactived.sock does not exist and neither --socket, \
                $INTERACTIVED_SOCKET nor $XDG_RUNTIME_DIR is set
                \(DaemonConnection.startHint)
                """)
        }
        do {
            client = try IPCClient(path: path)
        } catch {
            throw CommandFailure(status: .unreachable, message: "\(error)\n\(DaemonConnection.startHint)")
        }
        self.path = path
    }

    /// Calls a method; daemon errors become failures with their exit status.
    func call(_ method: String, _ params: JSONValue? = nil, timeoutMs: Int = 30_000) throws(CommandFailure) -> JSONValue {
        do {
            return try client.call(method, params, timeoutMs: timeoutMs)
        } catch {
            throw DaemonConnection.failure(error)
        }
    }

    /// Calls the method of `params` and reads its typed result; daemon errors become failures with
    /// their exit status.
    func call<Params: MethodParams>(_ params: Params, timeoutMs: Int = 30_000) throws(CommandFailure) -> Params.Result {
        do {
            return try client.call(params, timeoutMs: timeoutMs)
        } catch {
            throw DaemonConnection.failure(error)
        }
    }

    /// A daemon error is exit 1 (77 for a permission denial); a lost daemon is 69. Whether an
    /// "invalid params" reply is the user's mistake is for the command to say (main.swift).
    static func failure(_ error: IPCClientError) -> CommandFailure {
        switch error {
        case .rpc(let rpc):
            var message = rpc.message
            if let name = rpc.name { message += " (\(name))" }
            if let missing = rpc.data?["missing"]?.arrayValue {
                message += "\nmissing configuration: " + missing.compactMap(\.stringValue).joined(separator: ", ")
            }
            let status: ExitStatus = rpc.name == DaemonErrorName.permissionDenied.rawValue ? .permissionDenied : .daemonError
            return CommandFailure(status: status, message: message, rpc: rpc)
        case .unreachable, .connectionClosed:
            return CommandFailure(status: .unreachable, message: error.description)
        case .timeout, .protocolViolation:
            return CommandFailure(status: .daemonError, message: error.description)
        }
    }
}
