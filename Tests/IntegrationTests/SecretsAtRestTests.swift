import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Secrets at rest (issue 20, item 5) and a small store (issue 21, item 10), against the real
/// daemon: a token logged out is in no file of the state directory, `rememberSession: false`
/// keeps the session off the disk, and old rows are pruned at start.
@Suite struct SecretsAtRestTests {
    /// The files of the state directory that hold `text`.
    private func files(in directory: String, holding text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { name in
            (FileManager.default.contents(atPath: directory + "/" + name) ?? Data()).range(of: Data(text.utf8)) != nil
        }
    }

    private func login(_ client: DaemonConnection, token: String) async throws {
        _ = try await client.call("session.login", ["token": .string(token), "userId": "alice", "displayName": "Alice"])
    }

    /// After `session.logout` and a clean stop the token was still in `interactived.sqlite-wal`.
    @Test func aLoggedOutTokenIsInNoFileAfterAStop() async throws {
        let directory = try TemporaryDirectory()
        let daemon = try await DaemonProcess(directory: directory)
        let client = try await daemon.client()
        try await login(client, token: "tok-first-SECRET")
        try await login(client, token: "tok-second-SECRET")
        _ = try await client.call("session.logout")
        #expect(try await daemon.stop() == 0)
        #expect(try files(in: daemon.stateDirectory, holding: "tok-first-SECRET") == [])
        #expect(try files(in: daemon.stateDirectory, holding: "tok-second-SECRET") == [])
        #expect(try files(in: daemon.stateDirectory, holding: "Alice") == [])
    }

    /// `rememberSession: false`: nothing of the session reaches the disk, a kept one is erased
    /// when the key turns false, and a restart comes back anonymous.
    @Test func rememberSessionFalseKeepsTheSessionInMemory() async throws {
        let directory = try TemporaryDirectory()
        let daemon = try await DaemonProcess(directory: directory)
        let client = try await daemon.client()
        try await login(client, token: "tok-kept-SECRET")
        #expect(try files(in: daemon.stateDirectory, holding: "tok-kept-SECRET") != [])
        _ = try await client.call("config.set", ["rememberSession": false])
        #expect(try files(in: daemon.stateDirectory, holding: "tok-kept-SECRET") == [], "the kept session is erased")
        try await login(client, token: "tok-memory-SECRET")
        #expect(try await client.call("daemon.status")["session"]?["loggedIn"] == true)
        #expect(try files(in: daemon.stateDirectory, holding: "tok-memory-SECRET") == [])
        #expect(try files(in: daemon.stateDirectory, holding: "alice") == [], "nothing of the session either")
        daemon.signal(SIGKILL)  // not even a graceful stop's checkpoint is needed
        _ = try await daemon.waitForExit()
        #expect(try files(in: daemon.stateDirectory, holding: "tok-memory-SECRET") == [])

        let second = try await DaemonProcess(directory: directory)
        #expect(try await second.client().call("daemon.status")["session"]?["loggedIn"] == false)
        #expect(try await second.client().call("config.get")["rememberSession"] == false)
    }

    /// Answered timelines and predict results older than 30 days are pruned at start.
    @Test func oldRowsArePrunedAtStart() async throws {
        let directory = try TemporaryDirectory()
        let first = try await DaemonProcess(directory: directory)
        #expect(try await first.stop() == 0)
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        let old = nowMs - 31 * 86_400_000
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO answered VALUES ('alice', 'm1', 'tl-old', ?)", (int(sys.argv[2]),))
            db.execute("INSERT INTO answered VALUES ('alice', 'm1', 'tl-new', ?)", (int(sys.argv[3]),))
            db.execute("INSERT INTO predict_results VALUES ('p-old', '{}', ?)", (int(sys.argv[2]),))
            db.commit()
            """
        let store = first.stateDirectory + "/interactived.sqlite"
        let inserted = try await runCommand(["/usr/bin/python3", "-c", script, store, String(old), String(nowMs)])
        #expect(inserted.status == 0, "\(inserted.stderr)")
        let second = try await DaemonProcess(directory: directory)
        #expect(try await second.waitForLog("Pruned 2 answered timelines and predict results"))
        #expect(try await second.stop() == 0)
        let count = try await runCommand(["/usr/bin/python3", "-c",
                                          "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT timeline FROM answered').fetchall())",
                                          store])
        #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[('tl-new',)]")
    }
}
