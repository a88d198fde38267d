/// `interactived-voice --control-fd N`.
struct ProcessArguments: Equatable {
    /// The inherited end of the daemon's socket pair.
    var controlFD: Int32

    static let usage = "usage: interactived-voice --control-fd N"

    /// nil when the arguments are not exactly `--control-fd N` with N >= 0 (or `--control-fd=N`).
    init?(_ arguments: [String]) {
        var remaining = arguments[...]
        var fd: Int32?
        while let argument = remaining.popFirst() {
            if argument == "--control-fd", let value = remaining.popFirst() {
                fd = Int32(value)
            } else if argument.hasPrefix("--control-fd=") {
                fd = Int32(argument.dropFirst("--control-fd=".count))
            } else {
                return nil
            }
        }
        guard let fd, fd >= 0 else { return nil }
        controlFD = fd
    }
}
