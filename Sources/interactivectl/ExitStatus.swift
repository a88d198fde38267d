import IPCProtocol
import JSONValue

/// interactivectl's exit statuses (documented in `interactivectl --help`, its man page and the README).
enum ExitStatus: Int32 {
    case ok = 0
    /// The daemon answered with an error, or the command did not take effect.
    case daemonError = 1
    /// A bad command line (only that).
    case usage = 64
    /// The daemon could not be reached.
    case unreachable = 69
    /// The daemon said `interactive.PermissionDenied`.
    case permissionDenied = 77
    /// The token prompt was interrupted (Ctrl-C).
    case interrupted = 130

    /// Every status with what it means, for help and the man page.
    static let documented: [(ExitStatus, String)] = [
        (.ok, "success"),
        (.daemonError, "the daemon answered with an error, or the command did not take effect (the message says why)"),
        (.usage, "the command line is wrong (and for 'config set', a key or value the daemon refused)"),
        (.unreachable, "the daemon cannot be reached (no socket known, or nothing listening); the message says how to start it"),
        (.permissionDenied, "permission denied: an observer asked for a control method"),
        (.interrupted, "the token prompt was interrupted (Ctrl-C)"),
    ]
}

/// Why a command failed, with the exit status it maps to.
struct CommandFailure: Error {
    let status: ExitStatus
    let message: String
    /// The daemon's error reply, when the daemon answered with one.
    var rpc: RPCError?
    /// What the daemon replied, when it answered but the command did not take effect.
    var result: JSONValue?

    init(status: ExitStatus, message: String, rpc: RPCError? = nil, result: JSONValue? = nil) {
        self.status = status
        self.message = message
        self.rpc = rpc
        self.result = result
    }
}
