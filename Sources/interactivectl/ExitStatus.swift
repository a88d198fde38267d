/// interactivectl's exit statuses (documented in `interactivectl --help` and the README).
enum ExitStatus: Int32 {
    case ok = 0
    /// The daemon answered with an error.
    case daemonError = 1
    /// A bad command line.
    case usage = 64
    /// The daemon could not be reached.
    case unreachable = 69
    /// The daemon said `interactive.PermissionDenied`.
    case permissionDenied = 77
}
