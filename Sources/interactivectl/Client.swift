import Foundation
import IPCProtocol
import JSONValue

/// Why a command failed, with the exit status it maps to.
struct CommandFailure: Error {
    let status: ExitStatus
    let message: String
}

/// Opens the daemon connection for a command and maps client errors to exit statuses.
struct DaemonConnection {
    let client: IPCClient
    let path: String

    init(socketFlag: String?, environment: [String: String]) throws(CommandFailure) {
        guard let path = SocketPath.forClient(explicit: socketFlag, environment: environment) else {
            throw CommandFailure(status: .usage,
                                 message: "no daemon socket known: give --socket PATH or set INTERACTIVED_SOCKET")
        }
        do {
            client = try IPCClient(path: path)
        } catch {
            throw CommandFailure(status: .unreachable, message: """
                \(error)
                Is interactived running? Start it with 'systemctl start interactived.socket' (installed units) or \
                'interactived --socket \(path)', or point to it with --socket PATH.
                """)
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

    static func failure(_ error: IPCClientError) -> CommandFailure {
        switch error {
        case .rpc(let rpc):
            var message = rpc.message
            if let name = rpc.name { message += " (\(name))" }
            if let missing = rpc.data?["missing"]?.arrayValue {
                message += "\nmissing configuration: " + missing.compactMap(\.stringValue).joined(separator: ", ")
            }
            let status: ExitStatus
            switch rpc.code {
            case RPCErrorCode.invalidParams, RPCErrorCode.methodNotFound: status = .usage
            default: status = rpc.name == DaemonErrorName.permissionDenied.rawValue ? .permissionDenied : .daemonError
            }
            return CommandFailure(status: status, message: message)
        case .unreachable, .connectionClosed:
            return CommandFailure(status: .unreachable, message: error.description)
        case .timeout, .protocolViolation:
            return CommandFailure(status: .daemonError, message: error.description)
        }
    }
}
