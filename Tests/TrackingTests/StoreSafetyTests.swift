import Foundation
import Synchronization
import Testing
@testable import InteractiveDaemon
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// Secrets at rest and the state directory (issue 20, items 5 and 6; issue 21, item 10): a
/// forgotten token is in no file, a store moved aside loses its session, the store is kept
/// small, and nothing in the folder is followed, changed or renamed unless it is a regular file.
@Suite(.serialized) struct StoreSafetyTests {
    private let log = Logger(target: .stderr, minimumPriority: .error)
    private static let token = "tok-0123456789-SECRET"
    private static let session: JSONValue = ["token": .string(token), "userId": "alice", "displayName": "Alice"]

    /// Whether any file of the folder holds `text`.
    private func anyFile(in directory: String, contains text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { name in
            let data = FileManager.default.contents(atPath: directory + "/" + name) ?? Data()
            return data.range(of: Data(text.utf8)) != nil
        }
    }

    // MARK: Secrets at rest

    /// After a logout the token stayed in the write-ahead log (and in the database's free
    /// space): deleted rows are overwritten now, and `truncateLog` empties the log.
    @Test func aForgottenTokenIsInNoFile() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(directory: directory.path, log: log)
        try await store.setSetting("viewerSession", Self.session)
        await store.truncateLog()  // the session reaches the database file too
        try await store.setSetting("viewerSession", ["token": "tok-next", "userId": "bob"])
        #expect(try anyFile(in: directory.path, contains: Self.token).isEmpty == false)
        try await store.setSetting("viewerSession", nil as JSONValue?)
        await store.truncateLog()
        #expect(try anyFile(in: directory.path, contains: Self.token) == [])
        #expect(try anyFile(in: directory.path, contains: "tok-next") == [])
        #expect(StateDirectory.size(of: store.path + "-wal") == 0)
    }

    @Test func theSessionsValuesAreErasedFromBytes() {
        // The last value is cut off by the end of the bytes (a page of a damaged file).
        var bytes = Array(#"xx{"displayName":"Al\"ice","token":"t\\ok","userId":"u1"}yy"token":"cut"#.utf8)
        #expect(SessionScrub.erase(in: &bytes) == 4)
        #expect(String(decoding: bytes, as: UTF8.self) == #"xx{"displayName":"*******","token":"*****","userId":"**"}yy"token":"***"#)
    }

    /// A store moved aside kept the viewer's token for ever: its session is erased when it is
    /// moved, and from earlier ones at every start.
    @Test func storesMovedAsideLoseTheirSession() async throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try Store(directory: directory.path, log: log)
            try await store.setSetting("viewerSession", Self.session)
            await store.truncateLog()
        }
        let earlier = directory.path + "/interactived.sqlite.corrupt-100"
        try FileManager.default.copyItem(atPath: directory.path + "/interactived.sqlite", toPath: earlier)
        // Damaged: another program's application id.
        do {
            let foreign = try SQLiteDatabase(path: directory.path + "/interactived.sqlite")
            try foreign.execute("PRAGMA application_id = 1234")
        }
        let store = try Store(directory: directory.path, log: log)
        let moved = try #require(store.corruptMovedTo)
        #expect(FileManager.default.fileExists(atPath: moved) && FileManager.default.fileExists(atPath: earlier))
        #expect(try anyFile(in: directory.path, contains: Self.token) == [])
        #expect(try anyFile(in: directory.path, contains: "Alice") == [])
    }

    // MARK: Keeping the store small

    @Test func oldAndSurplusRowsArePruned() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(directory: directory.path, log: log)
        let now: Int64 = 1_800_000_000_000
        let day: Int64 = 86_400_000
        do {
            // Rows of chosen ages, written by a second connection.
            let writer = try SQLiteDatabase(path: store.path)
            try writer.execute("BEGIN")
            for index in 0..<(Store.maxKeptRows + 500) {
                try writer.query("INSERT INTO answered (viewer, media, timeline, at) VALUES ('u', 'm', ?, ?)",
                                 [SQLiteValue.text("t\(index)"), .integer(now - Int64(index) * 1000)])
            }
            try writer.query("INSERT INTO answered (viewer, media, timeline, at) VALUES ('u', 'm', 'old', ?)", [SQLiteValue.integer(now - 31 * day)])
            try writer.query("INSERT INTO predict_results (timeline, payload, at) VALUES ('p-old', '{}', ?)", [SQLiteValue.integer(now - 31 * day)])
            try writer.query("INSERT INTO predict_results (timeline, payload, at) VALUES ('p-new', '{}', ?)", [SQLiteValue.integer(now - day)])
            try writer.execute("COMMIT")
        }
        #expect(try await store.prune(nowMs: now) == 502)
        let answered = try await store.answeredTimelines(viewer: "u", media: "m")
        #expect(answered.count == Store.maxKeptRows && answered.contains("t0") && !answered.contains("t\(Store.maxKeptRows)"))
        #expect(!answered.contains("old"))
        #expect(try await store.predictResult(timeline: "p-old") == nil)
        #expect(try await store.predictResult(timeline: "p-new") == [:])
        #expect(try await store.prune(nowMs: now) == 0)
    }

    /// Issue 21, item 10: the store is pruned at start and then every day, each time as of that
    /// day's time (the days pass at once in the test's own sleep).
    @Test func theUpkeepPrunesAtStartAndThenEveryDay() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(directory: directory.path, log: log)
        let start: Int64 = 1_800_000_000_000
        let day: Int64 = 86_400_000
        let writer = try SQLiteDatabase(path: store.path)
        // Answered 29 days before the start: kept at start, pruned two days later.
        try writer.query("INSERT INTO answered (viewer, media, timeline, at) VALUES ('u', 'm', 't', ?)", [SQLiteValue.integer(start - 29 * day)])
        let days = Mutex<[Duration]>([])
        let clock = Mutex(start)
        await StoreUpkeep.run(store, log: log, sleep: { duration in
            days.withLock { $0.append(duration) }
            clock.withLock { $0 += day }
            if days.withLock({ $0.count }) == 3 { throw CancellationError() }
        }, nowMs: { clock.withLock { $0 } })
        #expect(days.withLock { $0 } == Array(repeating: StoreUpkeep.interval, count: 3))
        #expect(try await store.answeredTimelines(viewer: "u", media: "m").isEmpty, "pruned on the third day, 31 days old")
        try writer.query("INSERT INTO answered (viewer, media, timeline, at) VALUES ('u', 'm', 'fresh', ?)", [SQLiteValue.integer(start)])
        await StoreUpkeep.run(store, log: log, sleep: { _ in throw CancellationError() }, nowMs: { start + 29 * day })
        #expect(try await store.answeredTimelines(viewer: "u", media: "m") == ["fresh"], "29 days old: kept")
    }

    // MARK: The state directory

    /// A root-owned file outside the folder, which a link planted inside points to.
    private func outsideFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path + "-outside"
        try "root's file\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        return path
    }

    private func expectUntouched(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var info = stat()
        #expect(stat(path, &info) == 0, sourceLocation: sourceLocation)
        #expect(info.st_mode & 0o777 == 0o644, "its mode was changed", sourceLocation: sourceLocation)
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "root's file\n", "it was written", sourceLocation: sourceLocation)
    }

    /// A link planted as the store, its write-ahead log or its index made the daemon chmod (and
    /// SQLite write) the file it points to. Now a store path that is not a regular file is left
    /// as it is, never followed: the store runs in memory and says why.
    @Test(arguments: ["", "-wal", "-shm"])
    func aPlantedSymbolicLinkIsNeverFollowed(_ suffix: String) async throws {
        let directory = try TemporaryDirectory()
        let outside = try outsideFile(directory)
        defer { unlink(outside) }
        if suffix != "" {
            let store = try Store(directory: directory.path, log: log)
            try await store.setSetting("k", "v")
            await store.truncateLog()
        }
        let link = directory.path + "/interactived.sqlite" + suffix
        unlink(link)
        #expect(symlink(outside, link) == 0)
        let store = try Store(directory: directory.path, log: log)
        #expect(await store.health.persistent == false)
        #expect(await store.health.problem == StoreHealth.Problem.unsafe)
        #expect(store.corruptMovedTo == nil)
        try await store.setSetting("k", "w")
        expectUntouched(outside)
        #expect(StateDirectory.kind(of: link) == .other("a symbolic link"), "the link is left where it was")
    }

    /// Root reads any file, so "unreadable" is made by what no program can read as a database:
    /// a directory or a FIFO. Such a store path was renamed; now nothing that is not a regular
    /// file is renamed: it is left as it is and the store runs in memory.
    @Test(arguments: ["directory", "fifo"])
    func aStorePathThatIsNotARegularFileIsLeftAlone(_ kind: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/interactived.sqlite"
        if kind == "directory" {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        } else {
            #expect(mkfifo(path, 0o600) == 0)
        }
        let store = try Store(directory: directory.path, log: log)
        #expect(store.corruptMovedTo == nil)
        #expect(await store.health.problem == StoreHealth.Problem.unsafe)
        #expect(await store.health.statusNote?.contains("state directory unsafe") == true)
        #expect(StateDirectory.kind(of: path) == (kind == "directory" ? .directory : .other("a FIFO")))
        try await store.setSetting("k", "v")
        #expect(try await store.setting("k") == "v", "the store in memory works")
    }

    /// A folder others may write in: nothing in it is opened (a store planted there could point
    /// the daemon at another backend), the store runs in memory.
    @Test(arguments: [0o777, 0o770, 0o1733])
    func aFolderOthersCanWriteIsNotUsed(_ mode: Int) async throws {
        let directory = try TemporaryDirectory()
        do {
            let planted = try Store(directory: directory.path, log: log)
            try await planted.setSetting("runtimeConfig", ["socketUrl": "wss://elsewhere.example"])
        }
        let outside = try outsideFile(directory)
        defer { unlink(outside) }
        unlink(directory.path + "/interactived.sqlite-shm")
        #expect(symlink(outside, directory.path + "/interactived.sqlite-shm") == 0)
        chmod(directory.path, mode_t(mode))
        let store = try Store(directory: directory.path, log: log)
        #expect(await store.health.problem == StoreHealth.Problem.unsafe)
        #expect(await store.health.lastError?.contains("writable by others") == true)
        #expect(try await store.setting("runtimeConfig") == nil, "the planted store is not read")
        expectUntouched(outside)
    }

    @Test func aFolderOfAnotherUserIsNotUsed() async throws {
        let directory = try TemporaryDirectory()
        chown(directory.path, 65534, 65534)
        chmod(directory.path, 0o755)
        let store = try Store(directory: directory.path, log: log)
        #expect(await store.health.problem == StoreHealth.Problem.unsafe)
        #expect(await store.health.lastError?.contains("belongs to another user (uid 65534)") == true)
    }
}
