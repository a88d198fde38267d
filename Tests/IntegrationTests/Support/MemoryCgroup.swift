import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A memory cgroup of its own for a daemon under test, standing in for the unit's
/// `MemoryMax=64M`: cgroup v2 (`memory.max`) where /sys/fs/cgroup is the unified hierarchy,
/// else the v1 memory controller (`memory.limit_in_bytes`, swap included when accounted).
/// Needs root. Removed by `remove()` once the processes in it ended.
final class MemoryCgroup: @unchecked Sendable {
    let path: String
    private let version: Int

    /// Where a new cgroup can be made, and its version; nil when neither hierarchy is writable.
    private static var root: (path: String, version: Int)? {
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers"),
           (try? String(contentsOfFile: "/sys/fs/cgroup/cgroup.subtree_control", encoding: .utf8))?.contains("memory") == true,
           access("/sys/fs/cgroup", W_OK) == 0 {
            return ("/sys/fs/cgroup", 2)
        }
        if FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory/memory.limit_in_bytes"), access("/sys/fs/cgroup/memory", W_OK) == 0 {
            return ("/sys/fs/cgroup/memory", 1)
        }
        return nil
    }

    static var isAvailable: Bool { getuid() == 0 && root != nil }

    init(limitBytes: Int) throws {
        guard let root = Self.root else { throw TestFailure("no writable memory cgroup hierarchy") }
        version = root.version
        path = "\(root.path)/interactived-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        guard mkdir(path, 0o755) == 0 else { throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        if version == 2 {
            try write("memory.max", "\(limitBytes)")
            try? write("memory.swap.max", "0")
        } else {
            try write("memory.limit_in_bytes", "\(limitBytes)")
            try? write("memory.memsw.limit_in_bytes", "\(limitBytes)")
        }
    }

    /// A launcher for `DaemonProcess`: a shell that moves itself into this cgroup, then execs the daemon.
    var launcher: [String] { ["/bin/sh", "-c", "echo $$ > '\(path)/cgroup.procs' && exec \"$0\" \"$@\""] }

    /// The most memory the cgroup held, in bytes (v1: `memory.max_usage_in_bytes`; v2: `memory.peak`).
    var peakBytes: Int? { read(version == 2 ? "memory.peak" : "memory.max_usage_in_bytes").flatMap(Int.init) }

    /// How many processes of the cgroup the kernel killed for memory.
    var oomKills: Int? {
        let text = read(version == 2 ? "memory.events" : "memory.oom_control") ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix("oom_kill ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// Removes the cgroup. A test that failed before it stopped its daemon leaves it inside:
    /// what is still in the cgroup (this test's own processes) is killed first, and the
    /// removal waits for them to be gone, 5 s at most.
    func remove() {
        let procs = read("cgroup.procs") ?? ""
        for pid in procs.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        for _ in 0..<100 {
            if rmdir(path) == 0 || errno != EBUSY { return }
            usleep(50_000)  // the kernel empties the cgroup once the killed processes are reaped
        }
    }

    private func write(_ file: String, _ value: String) throws {
        do {
            try value.write(toFile: "\(path)/\(file)", atomically: false, encoding: .utf8)
        } catch {
            throw TestFailure("cannot write \(file) of \(path): \(error)")
        }
    }

    private func read(_ file: String) -> String? {
        (try? String(contentsOfFile: "\(path)/\(file)", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
