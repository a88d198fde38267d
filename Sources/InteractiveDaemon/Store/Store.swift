import FoundationEssentials
import JSONValue

/// The daemon's persistent state: one SQLite file (WAL) in the state directory.
///
/// Holds the runtime configuration, the fallback device id, answered timelines per viewer and
/// media, predict results, pending emit-acks and open tracking sessions. All calls run on the
/// bookkeeping thread (`BackgroundExecutor`), never on the cooperative pool. A damaged file is moved aside as
/// `<name>.corrupt-<time>` and a fresh one is started.
actor Store {
    nonisolated var unownedExecutor: UnownedSerialExecutor { BackgroundExecutor.bookkeeping.asUnownedSerialExecutor() }

    nonisolated let path: String
    /// Where a damaged store was moved at start, if it was.
    nonisolated let corruptMovedTo: String?
    /// The connection; extensions in other files add the queries of their own tables.
    let database: SQLiteDatabase

    private static let schema = """
        CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS answered (viewer TEXT NOT NULL, media TEXT NOT NULL, timeline TEXT NOT NULL,
            at INTEGER NOT NULL, PRIMARY KEY (viewer, media, timeline));
        CREATE TABLE IF NOT EXISTS predict_results (timeline TEXT PRIMARY KEY, payload TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS pending_acks (tracking_id TEXT NOT NULL, stage TEXT NOT NULL, payload TEXT NOT NULL,
            created INTEGER NOT NULL, PRIMARY KEY (tracking_id, stage));
        CREATE TABLE IF NOT EXISTS tracking_sessions (tracking_id TEXT PRIMARY KEY, state TEXT NOT NULL, updated INTEGER NOT NULL);
        """

    /// Opens (or creates) `interactived.sqlite` in `directory`, creating the directory.
    init(directory: String, log: Logger) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o750])
        let path = directory + "/interactived.sqlite"
        let opened = try Store.openOrReplace(path, log: log)
        self.path = path
        database = opened.database
        corruptMovedTo = opened.movedTo
    }

    /// Opens the file; a damaged one is moved aside and a fresh one opened.
    private static func openOrReplace(_ path: String, log: Logger) throws -> (database: SQLiteDatabase, movedTo: String?) {
        let failure: SQLiteError
        do {
            return (try open(path), nil)
        } catch {
            guard error.isCorruption else { throw error }
            failure = error
        }
        let aside = "\(path).corrupt-\(Timestamp.nowMs() / 1000)"
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
        }
        log.error("The store was damaged (\(failure)); it was moved to \(aside) and a fresh one started",
                  ["INTERACTIVE_STORE_PATH": path], id: .storeCorrupt)
        return (try open(path), aside)
    }

    private static func open(_ path: String) throws(SQLiteError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        let check = try database.query("PRAGMA quick_check")
        guard check.first?.first == "ok" else {
            throw SQLiteError(code: 11, message: check.compactMap { $0.first ?? nil }.joined(separator: "; "))
        }
        try database.execute(schema)
        return database
    }

    // MARK: Settings

    /// A stored value of the `settings` table.
    func setting(_ key: String) throws -> JSONValue? {
        let rows = try database.query("SELECT value FROM settings WHERE key = ?", [.text(key)])
        guard let text = rows.first?.first ?? nil else { return nil }
        return try? JSONValue.parse(text)
    }

    func setSetting(_ key: String, _ value: JSONValue?) throws {
        if let value {
            try database.query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               [.text(key), .text(value.jsonText)])
        } else {
            try database.query("DELETE FROM settings WHERE key = ?", [.text(key)])
        }
    }
}
