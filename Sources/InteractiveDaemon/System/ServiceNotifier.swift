import CInteractiveShims
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notification socket (sd_notify(3)): READY, STATUS, RELOADING, STOPPING
/// and watchdog pings. Every call is a no-op when `$NOTIFY_SOCKET` is unset.
///
/// Nothing here blocks: sd_notify waits when the receiver's queue is full (net.unix.max_dgram_qlen,
/// often 10 datagrams), and STATUS= is sent on every change of the room, the connection and the
/// overlays, from the display path. A full queue drops the message instead; systemd reads its
/// socket at once, so only a receiver that stopped reading loses any.
public struct ServiceNotifier: Sendable {
    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set).
    public let isListening: Bool

    public init() { isListening = getenv("NOTIFY_SOCKET") != nil }

    public func ready(status: String) { send("READY=1\nSTATUS=\(status)") }
    public func status(_ status: String) { send("STATUS=\(status)") }
    /// `MONOTONIC_USEC` tells the service manager when the reload began (sd_notify(3)).
    public func reloading() { send("RELOADING=1\nMONOTONIC_USEC=\(Self.monotonicMicroseconds())") }
    public func stopping() { send("STOPPING=1\nSTATUS=Stopping") }
    public func watchdog() { send("WATCHDOG=1") }

    /// The watchdog interval the service manager expects pings within, if enabled.
    public func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    private func send(_ state: String) { _ = interactive_notify_nonblocking(state) }

    /// CLOCK_MONOTONIC in microseconds, the clock systemd compares `MONOTONIC_USEC` with.
    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(max(now.tv_sec, 0)) &* 1_000_000 &+ UInt64(max(now.tv_nsec, 0) / 1000)
    }
}
