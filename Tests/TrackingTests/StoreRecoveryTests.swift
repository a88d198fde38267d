import Foundation
import Testing
@testable import InteractiveDaemon
import JSONValue
import Runtime
import RuntimeTesting
#if canImport(Glibc)
import Glibc
#endif

/// The store's edge cases: what cannot be used is moved aside, a read-only or full state
/// directory leaves the daemon running and says so, and acks the disk refused are kept.
/// Serialized, so that no test starts a process (mount, umount) while another has its store open
/// on a tmpfs: the child holds copies of the descriptors until it runs its program, and the
/// read-only remount then failed with "mount point is busy" (3 runs in 80 with the suite parallel).
/// Other suites still start processes beside it, so the remount is tried again while busy.
@Suite(.serialized) struct StoreRecoveryTests {
    private let log = Logger(target: .stderr, minimumPriority: .error)

    /// A closed store with one runtime setting, in `directory`.
    private func makeStore(in directory: String) async throws {
        let store = try Store(directory: directory, log: log)
        try await store.setSetting("runtimeConfig", ["deviceClass": "tv"])
    }

    private func files(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    private func expectMovedAside(_ store: Store, in directory: String) async throws {
        let moved = try #require(store.corruptMovedTo)
        #expect(moved.hasPrefix(directory + "/interactived.sqlite.corrupt-"))
        #expect(await store.health.movedAside == moved)
        #expect(await store.health.statusNote?.contains("damaged store moved to") == true)
        // The fresh store works.
        try await store.setSetting("k", "v")
        #expect(try await store.setting("k") == "v")
    }

    @Test func aDamagedWriteAheadLogIsMovedAside() async throws {
        let directory = try TemporaryDirectory()
        try await makeStore(in: directory.path)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
        try garbage.write(to: URL(fileURLWithPath: directory.path + "/interactived.sqlite-wal"))

        let store = try Store(directory: directory.path, log: log)
        let moved = try #require(store.corruptMovedTo)
        #expect(moved.hasPrefix(directory.path + "/interactived.sqlite.corrupt-") && moved.hasSuffix("-wal"))
        #expect(FileManager.default.contents(atPath: moved) == garbage)
        #expect(await store.health.statusNote?.contains("damaged write-ahead log moved to") == true)
        // The database itself was intact and is kept: what it held is still there.
        #expect(try await store.setting("runtimeConfig") == ["deviceClass": "tv"])
    }

    @Test func anIntactWriteAheadLogIsKept() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(directory: directory.path, log: log)
        try await store.setSetting("k", "v")
        // The log of an open store: a real header.
        let header = try #require(StateDirectory.prefix(of: store.path + "-wal", count: WALHeader.size))
        #expect(WALHeader.isIntact(header))
        var damaged = header
        damaged[12] ^= 0x01
        #expect(!WALHeader.isIntact(damaged))
        #expect(!WALHeader.isIntact(Array(header.prefix(20))))
        #expect(WALHeader.isIntact([]))
    }

    @Test(arguments: [
        "CREATE TABLE settings (name TEXT, data BLOB)",
        "CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)",
        "PRAGMA application_id = 1234; CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ])
    func aStoreOfAnotherSchemaIsMovedAside(_ sql: String) async throws {
        let directory = try TemporaryDirectory()
        do {
            let foreign = try SQLiteDatabase(path: directory.path + "/interactived.sqlite")
            try foreign.execute(sql)
        }
        let store = try Store(directory: directory.path, log: log)
        try await expectMovedAside(store, in: directory.path)
        // The runtime configuration can be kept again (config.set was -32603 before).
        try await store.setSetting("runtimeConfig", ["deviceClass": "tv"])
    }

    @Test func aStoreOfThisSchemaIsKept() async throws {
        let directory = try TemporaryDirectory()
        try await makeStore(in: directory.path)
        let store = try Store(directory: directory.path, log: log)
        #expect(store.corruptMovedTo == nil)
        #expect(try await store.setting("runtimeConfig") == ["deviceClass": "tv"])
        #expect(await store.health == StoreHealth(path: store.path, persistent: true))
    }

    @Test func aStateDirectoryThatIsAFileIsNamedPlainly() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/state"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        do {
            _ = try Store(directory: file, log: log)
            Issue.record("a store opened in a file")
        } catch {
            #expect(error.description == "the state directory \(file) is a file, not a directory")
        }
    }

    @Test func theStoreFileIsForTheDaemonsUserOnly() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(directory: directory.path, log: log)
        try await store.setSetting("k", "v")
        for suffix in ["", "-wal", "-shm"] {
            var info = stat()
            #expect(stat(store.path + suffix, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "\(suffix)")
        }
    }

    // MARK: Read-only and full state directories (tmpfs mounts: root only)

    @Test(.enabled(if: SmallFilesystem.available))
    func aReadOnlyStateDirectoryRunsInMemoryWithWhatTheStoreHeld() async throws {
        let filesystem = try SmallFilesystem(sizeKiB: 1024)
        try await makeStore(in: filesystem.path)
        try filesystem.remountReadOnly()

        let store = try Store(directory: filesystem.path, log: log)
        let health = await store.health
        #expect(!health.persistent)
        #expect(health.problem == .readOnly)
        #expect(health.statusNote?.contains("read-only") == true)
        #expect(try await store.setting("runtimeConfig") == ["deviceClass": "tv"])
        // Writes work, in memory.
        try await store.setSetting("k", "v")
        #expect(try await store.setting("k") == "v")
    }

    @Test(.enabled(if: SmallFilesystem.available), .timeLimit(.minutes(1))) @LoopActor
    func acksTheFullDiskRefusedAreStoredOnceSpaceReturns() async throws {
        let filesystem = try SmallFilesystem(sizeKiB: 512)
        let harness = try TrackingHarness(directory: filesystem.directory)
        let changes = HealthLog()
        await harness.store.observeHealth { health in changes.append(health) }
        try await harness.withTracker { tracker in
            tracker.receive("t0", emitTimestamp: nil)
            await harness.storeDelayPassed(tracker)
            /// Fills the disk, then the overlays `numbers` arrive (offline): the store refuses
            /// their writes once the delay passed.
            @LoopActor func refusedOverlays(_ numbers: ClosedRange<Int>) async throws {
                try filesystem.fill()
                for number in numbers { tracker.receive("t\(number)", emitTimestamp: nil) }
                await harness.storeDelayPassed(tracker)
                #expect(await harness.store.health.problem == .full)
            }

            try await refusedOverlays(1...20)
            #expect(changes.all.last?.problem == .full)
            #expect(changes.all.last?.statusNote?.contains("full") == true)
            let refused = try #require(await harness.status()?["unstoredWrites"]?.intValue)
            #expect(refused > 0)

            // Space returns; a graceful stop (flushStore) stores what was refused.
            try filesystem.emptyFiller()
            await tracker.flushStore()
            #expect(try await harness.store.pendingAcks().count == 21)
            #expect(await harness.store.health.problem == nil)
            #expect(changes.all.last?.problem == nil)
            #expect(await harness.status()?["unstoredWrites"] == 0)
            // And a restart would deliver them: they are in the file.
            #expect(try await harness.reopened().store.pendingAcks().count == 21)

            // Refused again; without a stop, the store is tried again 5 s after the refusal.
            try await refusedOverlays(21...40)
            let refusal = harness.timers.now
            #expect(harness.timers.deadlines == [refusal + TrackingBook.storeRetryInterval], "one retry timer")
            try filesystem.emptyFiller()
            harness.timers.advance(by: TrackingBook.storeRetryInterval - .milliseconds(1))
            await tracker.writer.idle()
            #expect(try await harness.store.pendingAcks().count == 21)
            harness.timers.advance(by: .milliseconds(1))
            await tracker.writer.idle()
            #expect(try await harness.store.pendingAcks().count == 41)
            #expect(await harness.status()?["unstoredWrites"] == 0)
        }
    }
}

/// The store's health changes, as the observer saw them.
final class HealthLog: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [StoreHealth] = []

    func append(_ health: StoreHealth) { lock.withLock { changes.append(health) } }
    var all: [StoreHealth] { lock.withLock { changes } }
}

/// A small tmpfs mounted on a temporary directory (root only), unmounted at the end.
final class SmallFilesystem: @unchecked Sendable {
    let directory: TemporaryDirectory
    var path: String { directory.path }
    private var filler: String { path + "/filler" }

    static let available: Bool = {
        guard geteuid() == 0, let probe = try? SmallFilesystem(sizeKiB: 64) else { return false }
        return FileManager.default.isWritableFile(atPath: probe.path)
    }()

    init(sizeKiB: Int) throws {
        directory = try TemporaryDirectory()
        try Self.run(["/bin/mount", "-t", "tmpfs", "-o", "size=\(sizeKiB)k,mode=0755", "tmpfs", directory.path])
    }

    deinit { _ = try? Self.run(["/bin/umount", "-l", directory.path]) }

    /// Tried again for up to 3 s while the kernel says "busy": a suite beside this one may be
    /// starting a process, whose child holds copies of this process's descriptors (the store's,
    /// on this file system) until it runs its program.
    func remountReadOnly() throws {
        let deadline = ContinuousClock.now + .seconds(3)
        while true {
            do {
                try Self.run(["/bin/mount", "-o", "remount,ro", directory.path])
                return
            } catch let failure as TestFailure where failure.description.contains("busy") && ContinuousClock.now < deadline {
                usleep(20_000)
            }
        }
    }

    /// Writes a file until the file system is full.
    func fill() throws {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw TestFailure("cannot create \(filler)") }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0xAB, count: 4096)
        while block.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        guard errno == ENOSPC else { throw TestFailure("filling stopped with errno \(errno), not ENOSPC") }
    }

    func emptyFiller() throws { try FileManager.default.removeItem(atPath: filler) }

    /// Runs mount or umount; waits for the process itself (it may run on the loop's thread).
    private static func run(_ argv: [String]) throws {
        let outcome = try TestCommand.runBlocking(argv[0], Array(argv.dropFirst()))
        guard outcome.succeeded else { throw TestFailure("\(argv.joined(separator: " ")) failed (\(outcome.termination)): \(outcome.output)") }
    }
}
