/// How a media process ended.
enum MediaExit: Sendable, Equatable, CustomStringConvertible {
    case exited(status: Int32)
    case signalled(Int32)
    /// It could not be started at all.
    case notStarted(reason: String)

    var description: String {
        switch self {
        case .exited(let status): return "exit status \(status)"
        case .signalled(let signal): return "signal \(signal)"
        case .notStarted(let reason): return "could not start: \(reason)"
        }
    }
}
