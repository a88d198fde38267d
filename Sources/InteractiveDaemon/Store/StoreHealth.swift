import CSQLite
import JSONValue

/// Whether the store keeps what it is given, as `daemon.status` (`store`) and `STATUS=` show it.
struct StoreHealth: Sendable, Equatable {
    /// Why writes do not reach the disk.
    enum Problem: String, Sendable {
        /// The state directory cannot be written (read-only file system, permissions): the store
        /// runs in memory and nothing is kept across a restart.
        case readOnly = "read-only"
        /// The disk is full: writes fail until space returns (they are retried).
        case full
        /// Another write error (I/O): writes fail until it clears.
        case writeFailed = "write-failed"
        /// The state directory may be written by other users, or a store path is not a regular
        /// file (a symbolic link, a FIFO, a directory): the store runs in memory, nothing in the
        /// folder is touched.
        case unsafe
    }

    let path: String
    /// False when the store runs in memory (nothing survives a restart).
    var persistent: Bool
    /// Where a damaged, foreign or unreadable store was moved at start.
    var movedAside: String?
    var problem: Problem?
    /// The last write error, in SQLite's words.
    var lastError: String?

    /// The `store` section of `daemon.status`.
    var json: JSONValue {
        ["path": .string(path), "persistent": .bool(persistent), "corruptMovedTo": JSONValue(movedAside),
         "problem": JSONValue(problem?.rawValue), "lastError": JSONValue(lastError), "summary": JSONValue(statusNote)]
    }

    /// What `STATUS=` says about the store (`summary` in `daemon.status`); nil while all is well.
    var statusNote: String? {
        var notes: [String] = []
        if let movedAside { notes.append("damaged \(movedAside.hasSuffix("-wal") ? "write-ahead log" : "store") moved to \(movedAside)") }
        switch problem {
        case .readOnly?: notes.append("state directory read-only, nothing is kept across a restart")
        case .full?: notes.append("state directory full, writes are retried")
        case .writeFailed?: notes.append("store writes failing")
        case .unsafe?: notes.append("state directory unsafe (writable by others, or a store path not a regular file), nothing is kept across a restart")
        case nil: break
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    /// The problem a failed write shows, nil for errors that are not about the disk (a constraint,
    /// a busy database).
    static func problem(of error: any Error) -> Problem? {
        guard let error = error as? SQLiteError else { return nil }
        switch error.code & 0xFF {
        case SQLITE_FULL: return .full
        case SQLITE_READONLY, SQLITE_CANTOPEN: return .readOnly
        case SQLITE_IOERR: return .writeFailed
        default: return nil
        }
    }
}
