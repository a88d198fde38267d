import CSystemd

/// The service manager's notification socket (sd_notify): READY, STATUS, RELOADING, STOPPING
/// and watchdog pings. Every call is a no-op when `$NOTIFY_SOCKET` is unset.
public struct ServiceNotifier: Sendable {
    public init() {}

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ status: String) { send("STATUS=\(status)") }
    public func reloading() { send("RELOADING=1") }
    public func stopping() { send("STOPPING=1\nSTATUS=Stopping") }
    public func watchdog() { send("WATCHDOG=1") }

    /// The watchdog interval the service manager expects pings within, if enabled.
    public func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    private func send(_ state: String) { _ = sd_notify(0, state) }
}
