import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The state directory (issue 20, item 6), against the real daemon run as root: in a folder
/// others could write, an unprivileged user (nobody) planted a link that made the daemon chmod a
/// root-owned file outside it. Nothing in such a folder is used now, and no store path that is
/// not a regular file is ever followed, changed or renamed.
@Suite struct StateDirectoryTests {
    /// A root-owned file outside the state directory, mode 0644.
    private func rootFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path + "/root-owned.txt"
        try "root's file\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        return path
    }

    private func expectUntouched(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var info = stat()
        #expect(stat(path, &info) == 0, sourceLocation: sourceLocation)
        #expect(info.st_mode & 0o777 == 0o644, "mode \(String(info.st_mode & 0o777, radix: 8))", sourceLocation: sourceLocation)
        #expect(info.st_uid == 0, sourceLocation: sourceLocation)
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "root's file\n", sourceLocation: sourceLocation)
    }

    /// nobody plants the links in a world-writable state directory before the daemon starts.
    @Test func linksPlantedByAnotherUserInAFolderOthersCanWriteAreNotFollowed() async throws {
        let directory = try TemporaryDirectory()
        let target = try rootFile(directory)
        let state = directory.path + "/state"
        #expect(mkdir(state, 0o777) == 0 && chmod(state, 0o777) == 0)
        let plant = """
            import os, sys
            os.setgid(65534); os.setuid(65534)
            for suffix in ("", "-wal", "-shm"):
                os.symlink(sys.argv[2], sys.argv[1] + "/interactived.sqlite" + suffix)
            """
        let planted = try await runCommand(["/usr/bin/python3", "-c", plant, state, target])
        #expect(planted.status == 0, "\(planted.stderr)")
        let daemon = try await DaemonProcess(directory: directory)
        let client = try await daemon.client()
        let store = try await client.call("daemon.status")["store"]
        #expect(store?["problem"] == "unsafe")
        #expect(store?["persistent"] == false)
        #expect(store?["lastError"]?.stringValue?.contains("writable by others") == true)
        _ = try await client.call("config.set", ["deviceClass": "tv"])  // a write, to memory
        #expect(try await daemon.waitForLog("is writable by others (mode 777): the store runs in memory"))
        #expect(try await daemon.stop() == 0)
        expectUntouched(target)
    }

    /// In a folder only the daemon's user may write, a link left there (by an earlier owner,
    /// a mistaken copy) is still never followed: the store runs in memory, the file is untouched.
    @Test func aLinkInTheDaemonsOwnFolderIsNotFollowedEither() async throws {
        let directory = try TemporaryDirectory()
        let target = try rootFile(directory)
        let state = directory.path + "/state"
        #expect(mkdir(state, 0o750) == 0)
        #expect(symlink(target, state + "/interactived.sqlite-wal") == 0)
        let daemon = try await DaemonProcess(directory: directory)
        let client = try await daemon.client()
        #expect(try await client.call("daemon.status")["store"]?["problem"] == "unsafe")
        _ = try await client.call("config.set", ["deviceClass": "tv"])
        #expect(try await daemon.waitForLog("interactived.sqlite-wal is a symbolic link, which is left as it is"))
        #expect(try await daemon.stop() == 0)
        expectUntouched(target)
        var info = stat()
        #expect(lstat(state + "/interactived.sqlite-wal", &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK, "not renamed")
    }
}
