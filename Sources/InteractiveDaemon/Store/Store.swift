import CSQLite
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's persistent state: one SQLite file (WAL, mode 0600) in the state directory.
///
/// Holds the runtime configuration, the fallback device id, the viewer's session and room,
/// answered timelines per viewer and media, predict results, pending emit-acks and open tracking
/// sessions. All calls run on the bookkeeping thread (`BookkeepingExecutor`), never on the
/// event loop or the cooperative pool: callers reach it only by messages.
///
/// A store that cannot be used as it is (damaged, a damaged write-ahead log, another program's
/// schema, unreadable) is moved aside as `<name>.corrupt-<time>`, the viewer's session erased
/// from it (`SessionScrub`), and a fresh one is started. A read-only state directory, or one
/// where even a fresh store cannot be made, leaves the store in memory; so does a folder others
/// may write in, or a store path that is not a regular file (a symbolic link, a FIFO, a
/// directory: left as it is, never followed, changed or renamed). Either way the daemon runs,
/// and `health` says what happened. Deleted rows are overwritten (`secure_delete`), and
/// `truncateLog` empties the write-ahead log: a token forgotten is gone from the files.
actor Store {
    nonisolated var unownedExecutor: UnownedSerialExecutor { BookkeepingExecutor.shared.asUnownedSerialExecutor() }

    nonisolated let path: String
    /// Where a store that could not be used was moved at start, if it was.
    nonisolated let corruptMovedTo: String?
    /// The connection; extensions in other files add the queries of their own tables.
    let database: SQLiteDatabase
    private(set) var health: StoreHealth
    private var healthObserver: (@Sendable (StoreHealth) async -> Void)?

    /// `PRAGMA application_id` of the daemon's stores ("ITVD").
    private static let applicationID: Int64 = 0x4954_5644

    private static let schema = """
        CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS answered (viewer TEXT NOT NULL, media TEXT NOT NULL, timeline TEXT NOT NULL,
            at INTEGER NOT NULL, PRIMARY KEY (viewer, media, timeline));
        CREATE TABLE IF NOT EXISTS predict_results (timeline TEXT PRIMARY KEY, payload TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS pending_acks (tracking_id TEXT NOT NULL, stage TEXT NOT NULL, payload TEXT NOT NULL,
            created INTEGER NOT NULL, PRIMARY KEY (tracking_id, stage));
        CREATE TABLE IF NOT EXISTS tracking_sessions (tracking_id TEXT PRIMARY KEY, state TEXT NOT NULL, updated INTEGER NOT NULL);
        """

    /// The columns of each table of `schema`, to recognise a store of another schema.
    private static let columns: [String: [String]] = [
        "settings": ["key", "value"],
        "answered": ["viewer", "media", "timeline", "at"],
        "predict_results": ["timeline", "payload", "at"],
        "pending_acks": ["tracking_id", "stage", "payload", "created"],
        "tracking_sessions": ["tracking_id", "state", "updated"],
    ]

    /// Opens (or creates) `interactived.sqlite` in `directory`, creating the directory. Throws
    /// only when the directory itself cannot be had (it is a file, or cannot be created).
    init(directory: String, log: Logger) throws(StoreError) {
        try StateDirectory.prepare(directory)
        let path = directory + "/interactived.sqlite"
        let opened: Opened
        if let unsafe = StateDirectory.unsafeReason(directory) {
            log.error("\(unsafe): the store runs in memory (nothing is kept across a restart) and nothing in the folder is read",
                      ["INTERACTIVE_STORE_PATH": path])
            opened = try Store.inMemory(copying: nil, problem: .unsafe, error: unsafe, log: log)
        } else {
            opened = try Store.openOrReplace(path, directoryWritable: StateDirectory.isWritable(directory), log: log)
            Store.scrubMovedAside(in: directory, log: log)
        }
        self.path = path
        database = opened.database
        corruptMovedTo = opened.movedAside
        health = StoreHealth(path: path, persistent: opened.persistent, movedAside: opened.movedAside,
                             problem: opened.problem, lastError: opened.error)
    }

    /// Calls `observer` after every change of `health` (a write failed, or worked again).
    func observeHealth(_ observer: @escaping @Sendable (StoreHealth) async -> Void) { healthObserver = observer }

    // MARK: Opening

    private struct Opened {
        let database: SQLiteDatabase
        var movedAside: String?
        var persistent = true
        var problem: StoreHealth.Problem?
        var error: String?
    }

    /// Why a store file cannot be used as it is.
    private struct Unusable: Error {
        let reason: String
    }

    /// A store path is not a regular file: it is left as it is and the store runs in memory.
    private struct NotRegular: Error {
        let reason: String
    }

    /// The store's write-ahead log has a damaged header: SQLite would ignore it (and what it
    /// holds) silently. The log alone is moved aside; the database itself is intact (a power cut
    /// while SQLite rewrote the header leaves exactly this) and is kept.
    private struct DamagedLog: Error {}

    private static func openOrReplace(_ path: String, directoryWritable: Bool, log: Logger) throws(StoreError) -> Opened {
        guard directoryWritable else {
            let reason = "the state directory \(StateDirectory.parentPath(of: path)) is not writable (\(StateDirectory.errorText()))"
            log.error("\(reason); the store runs in memory and nothing is kept across a restart",
                      ["INTERACTIVE_STORE_PATH": path])
            return try inMemory(copying: path, problem: .readOnly, error: reason, log: log)
        }
        let unusable: Unusable
        do {
            return Opened(database: try open(path))
        } catch let error as Unusable {
            unusable = error
        } catch let error as NotRegular {
            log.error("The store cannot be used: \(error.reason), which is left as it is; the store runs in memory "
                      + "and nothing is kept across a restart", ["INTERACTIVE_STORE_PATH": path])
            return try inMemory(copying: nil, problem: .unsafe, error: error.reason, log: log)
        } catch is DamagedLog {
            return try openMovingLogAside(path, log: log)
        } catch {
            return try fallBack(path, error: error, log: log)
        }
        return try moveAsideAndReopen(path, suffixes: ["", "-wal", "-shm"], problem: "The store cannot be used (\(unusable.reason))",
                                      outcome: "a fresh one started", log: log)
    }

    /// Moves a damaged write-ahead log (and its index) aside and opens the database without it.
    private static func openMovingLogAside(_ path: String, log: Logger) throws(StoreError) -> Opened {
        try moveAsideAndReopen(path, suffixes: ["-wal", "-shm"],
                               problem: "The store's write-ahead log is damaged (what it held is lost)",
                               outcome: "the store kept", log: log)
    }

    /// Renames the store's files with `suffixes` to `<path>.corrupt-<time>` + suffix, logs it and
    /// opens the store again (in memory when that fails). The first file moved is the one
    /// `daemon.status` names (`corruptMovedTo`).
    private static func moveAsideAndReopen(_ path: String, suffixes: [String], problem: String, outcome: String,
                                           log: Logger) throws(StoreError) -> Opened {
        let aside = "\(path).corrupt-\(Timestamp.nowMs() / 1000)"
        let reported = aside + (suffixes.first ?? "")
        do {
            for suffix in suffixes where StateDirectory.kind(of: path + suffix) == .regularFile {
                try StateDirectory.move(path + suffix, to: aside + suffix)
            }
        } catch {
            log.error("\(problem) and cannot be moved aside: \(error)", ["INTERACTIVE_STORE_PATH": path], id: .storeCorrupt)
            return try inMemory(copying: nil, problem: .writeFailed, error: error.description, log: log)
        }
        log.error("\(problem); it was moved to \(reported) and \(outcome)", ["INTERACTIVE_STORE_PATH": path], id: .storeCorrupt)
        var opened: Opened
        do {
            opened = Opened(database: try open(path))
        } catch {
            opened = try fallBack(path, error: error, log: log)
        }
        opened.movedAside = reported
        return opened
    }

    /// A fresh store could not be made either (a full disk, an I/O error): the store runs in memory.
    private static func fallBack(_ path: String, error: any Error, log: Logger) throws(StoreError) -> Opened {
        log.error("Cannot open the store (\(error)); it runs in memory and nothing is kept across a restart",
                  ["INTERACTIVE_STORE_PATH": path])
        return try inMemory(copying: nil, problem: StoreHealth.problem(of: error) ?? .writeFailed, error: "\(error)", log: log)
    }

    /// Opens the file and checks it is an intact store of this schema (`Unusable` when not;
    /// other errors are SQLite's).
    private static func open(_ path: String) throws -> SQLiteDatabase {
        for suffix in ["", "-wal", "-shm"] {
            switch StateDirectory.kind(of: path + suffix) {
            case .missing, .regularFile: break
            case .directory: throw NotRegular(reason: "\(path + suffix) is a directory")
            case .other(let what): throw NotRegular(reason: "\(path + suffix) is \(what)")
            }
        }
        if StateDirectory.kind(of: path) == .regularFile, access(path, R_OK | W_OK) != 0 {
            throw Unusable(reason: "it cannot be read and written: \(StateDirectory.errorText())")
        }
        let wal = path + "-wal"
        switch StateDirectory.kind(of: wal) {
        case .missing: break
        case .regularFile:
            guard let header = StateDirectory.prefix(of: wal, count: WALHeader.size) else {
                throw Unusable(reason: "its write-ahead log cannot be read: \(StateDirectory.errorText())")
            }
            guard WALHeader.isIntact(header) else { throw DamagedLog() }
        case .directory, .other: break  // refused above
        }
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: path)
        } catch {
            guard error.code & 0xFF == SQLITE_CANTOPEN || error.isCorruption else { throw error }
            throw Unusable(reason: "\(error)")
        }
        for suffix in ["", "-wal", "-shm"] { StateDirectory.restrictToOwner(path + suffix) }
        do {
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA secure_delete=ON;")
            let check = try database.query("PRAGMA quick_check")
            guard check.first?.first == "ok" else {
                throw Unusable(reason: "damaged: " + check.compactMap { $0.first ?? nil }.joined(separator: "; "))
            }
        } catch let error as SQLiteError where error.isCorruption {
            throw Unusable(reason: "\(error)")
        }
        if let foreign = try foreignSchema(database, schema: "main") { throw Unusable(reason: foreign) }
        try database.execute(schema)
        try database.execute("PRAGMA application_id=\(applicationID)")
        return database
    }

    /// Why the store in `schema` is not one of this daemon's, nil when it is (or is empty).
    private static func foreignSchema(_ database: SQLiteDatabase, schema: String) throws -> String? {
        let applicationText = try database.query("PRAGMA \(schema).application_id").first?.first ?? nil
        let application = applicationText.flatMap { Int64($0) } ?? 0
        if application != 0 && application != applicationID {
            return "another program's database (application_id \(application))"
        }
        let tables = try database.query("SELECT name FROM \(schema).sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .compactMap { $0.first ?? nil }
        for table in tables {
            guard let expected = columns[table] else { return "another schema (table \(table))" }
            let found = try database.query("SELECT name FROM pragma_table_info(?, ?)", [.text(table), .text(schema)])
                .compactMap { $0.first ?? nil }
            guard found == expected else {
                return "another schema (table \(table) has columns \(found.joined(separator: ", ")))"
            }
        }
        return nil
    }

    /// A store in memory, with what a readable store at `path` holds (read without writing).
    private static func inMemory(copying path: String?, problem: StoreHealth.Problem, error: String,
                                 log: Logger) throws(StoreError) -> Opened {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(path: ":memory:")
            try database.execute(schema)
        } catch {
            throw StoreError(description: "cannot create a store in memory either: \(error)")
        }
        if let path, StateDirectory.kind(of: path) == .regularFile {
            do {
                try copy(from: path, into: database)
                log.notice("The store's contents were read from \(path) (read-only)", ["INTERACTIVE_STORE_PATH": path])
            } catch {
                log.warning("Cannot read the store at \(path): \(error)", ["INTERACTIVE_STORE_PATH": path])
            }
        }
        return Opened(database: database, persistent: false, problem: problem, error: error)
    }

    /// Copies every table of this schema from the store at `path`, opened read-only (immutable).
    private static func copy(from path: String, into database: SQLiteDatabase) throws {
        try database.query("ATTACH DATABASE ? AS previous", [.text(SQLiteDatabase.readOnlyURI(path))])
        defer { _ = try? database.query("DETACH DATABASE previous") }
        if let foreign = try foreignSchema(database, schema: "previous") { throw StoreError(description: foreign) }
        let present = Set(try database.query("SELECT name FROM previous.sqlite_master WHERE type = 'table'").compactMap { $0.first ?? nil })
        for (table, names) in columns where present.contains(table) {
            let list = names.joined(separator: ", ")
            try database.execute("INSERT OR IGNORE INTO main.\(table) (\(list)) SELECT \(list) FROM previous.\(table)")
        }
    }

    /// Erases the viewer's session from every store moved aside in `directory` (this start's
    /// and earlier ones': a store from before this rule kept it for ever).
    private static func scrubMovedAside(in directory: String, log: Logger) {
        for name in StateDirectory.names(in: directory) where name.hasPrefix("interactived.sqlite.corrupt-") {
            let path = directory + "/" + name
            guard StateDirectory.kind(of: path) == .regularFile else { continue }
            if let erased = SessionScrub.scrub(path), erased > 0 {
                log.notice("Erased the viewer's session from \(path), a store moved aside", ["INTERACTIVE_STORE_PATH": path])
            }
        }
    }

    // MARK: Secrets

    /// Empties the write-ahead log into the database (`wal_checkpoint(TRUNCATE)`): with
    /// `secure_delete` on, a deleted row (a forgotten session and its token) is then in neither
    /// file. Called after a logout and at a graceful stop.
    func truncateLog() {
        guard health.persistent else { return }
        _ = try? database.query("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    // MARK: Writes and health

    /// Runs a write and keeps `health` up to date: a disk problem is noted, a success after one
    /// clears it (a read-only store in memory stays read-only).
    @discardableResult
    func recordingHealth<T>(_ write: () throws -> T) async throws -> T {
        do {
            let result = try write()
            await noteWriteOutcome(nil)
            return result
        } catch {
            await noteWriteOutcome(error)
            throw error
        }
    }

    /// Keeps `health` up to date after a write (or a batch of writes): `failure` is the error a
    /// write met, `nil` when everything was stored.
    func noteWriteOutcome(_ failure: (any Error)?) async {
        guard health.persistent else { return }
        if let failure {
            if let problem = StoreHealth.problem(of: failure) { await updateHealth(problem: problem, error: "\(failure)") }
        } else if health.problem != nil {
            await updateHealth(problem: nil, error: health.lastError)
        }
    }

    private func updateHealth(problem: StoreHealth.Problem?, error: String?) async {
        var updated = health
        updated.problem = problem
        updated.lastError = error
        guard updated != health else { return }
        health = updated
        await healthObserver?(updated)
    }

    // MARK: Settings

    /// A stored value of the `settings` table.
    func setting(_ key: String) throws -> JSONValue? {
        let rows = try database.query("SELECT value FROM settings WHERE key = ?", [.text(key)])
        guard let text = rows.first?.first ?? nil else { return nil }
        return try? JSONValue.parse(text)
    }

    func setSetting(_ key: String, _ value: JSONValue?) async throws {
        try await recordingHealth {
            if let value {
                try database.query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                   [.text(key), .text(value.jsonText)])
            } else {
                try database.query("DELETE FROM settings WHERE key = ?", [.text(key)])
            }
        }
    }
}
