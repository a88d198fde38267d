#if canImport(Glibc)
import Glibc
#endif

/// Where the local API socket lives (IPC.md, Transport).
public enum SocketPath {
    /// The path used when running as root.
    public static let system = "/run/interactived/interactived.sock"

    /// The path a client connects to: `explicit` (`--socket`), else `$INTERACTIVED_SOCKET`,
    /// else the system path if it exists, else `$XDG_RUNTIME_DIR/interactived.sock`.
    /// nil when none applies; the caller's error should name `--socket`.
    public static func forClient(explicit: String?, environment: [String: String]) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let env = environment["INTERACTIVED_SOCKET"], !env.isEmpty { return env }
        if access(system, F_OK) == 0 { return system }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/interactived.sock" }
        return nil
    }

    /// The path the daemon listens on: `explicit` (`--socket`), else `$INTERACTIVED_SOCKET`,
    /// else the system path as root, else `$XDG_RUNTIME_DIR/interactived.sock`.
    public static func forDaemon(explicit: String?, environment: [String: String], isRoot: Bool) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let env = environment["INTERACTIVED_SOCKET"], !env.isEmpty { return env }
        if isRoot { return system }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/interactived.sock" }
        return nil
    }
}
