import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The local API over the real socket of the real daemon binary.
@Suite struct LocalAPITests {
    @Test func helloStatusAndProtocolErrors() async throws {
        let daemon = try await DaemonProcess()
        let client = try await daemon.client()
        let hello = try await client.call("daemon.hello", ["client": "test", "protocol": 1])
        #expect(hello["daemon"] == "interactived")
        #expect(hello["protocol"] == 1)
        let status = try await client.call("daemon.status")
        #expect(status["bootId"] == hello["bootId"])
        #expect(status["session"]?["loggedIn"] == false)

        try await client.send(raw: Array("{not json\n".utf8))
        #expect(try await errorReply(client)?["error"]?["code"] == -32700)
        try await client.send(raw: Array(#"[{"jsonrpc":"2.0","id":1,"method":"daemon.status"}]"#.utf8) + [0x0A])
        #expect(try await errorReply(client)?["error"]?["code"] == -32600)
        try await client.send(raw: Array(#"{"jsonrpc":"2.0","id":9,"method":"no.such"}"#.utf8) + [0x0A])
        let unknown = try await errorReply(client)
        #expect(unknown?["error"]?["code"] == -32601)
        #expect(unknown?["id"] == 9)
        await #expect(throws: IPCClientError.self) { try await client.call("session.login", ["userId": "u"]) }
        // The connection is still usable after every bad line.
        #expect(try await client.call("daemon.status")["bootId"] == hello["bootId"])
    }

    @Test func twoHundredConcurrentClients() async throws {
        let daemon = try await DaemonProcess()
        let failures = await withTaskGroup(of: String?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    do {
                        let client = try await daemon.client()
                        let hello = try await client.call("daemon.hello", ["client": .string("c\(index)"), "protocol": 1])
                        guard hello["daemon"] == "interactived" else { throw TestFailure("bad hello \(hello)") }
                        _ = try await client.call("daemon.status")
                        return nil
                    } catch {
                        return "client \(index): \(error)"
                    }
                }
            }
            var failures: [String] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func badClientsDoNotDisturbOthers() async throws {
        let daemon = try await DaemonProcess()
        let good = try await daemon.client()
        let garbage = try await daemon.client()
        let huge = try await daemon.client()
        let quitter = try await daemon.client()

        var random = SystemRandomNumberGenerator()
        try await garbage.send(raw: (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) } + [0x0A])
        // A 2 MiB line: one -32600 with id null, then the connection goes on.
        try await huge.send(raw: [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20) + [0x0A])
        let oversized = try await errorReply(huge)
        #expect(oversized?["error"]?["code"] == -32600)
        #expect(oversized?["id"] == .null)
        #expect(try await huge.call("daemon.status")["bootId"] != nil)
        // A client that disconnects in the middle of a line.
        try await quitter.send(raw: Array(#"{"jsonrpc":"2.0","id":1,"meth"#.utf8))
        _ = consume quitter

        for _ in 0..<20 { #expect(try await good.call("daemon.status")["bootId"] != nil) }
        #expect(try await garbage.call("daemon.hello", ["client": "again", "protocol": 1])["daemon"] == "interactived")
    }

    @Test func slowSubscriberLagsWhileFastOneGetsEverything() async throws {
        let daemon = try await DaemonProcess()
        let slow = try await daemon.client()
        let producer = try await daemon.client()
        let slowStart = try await slow.call("events.subscribe", ["types": ["config."]])["seq"]?.intValue ?? -1

        let count = 6000
        let fast = try await daemon.client()
        let fastStart = try await fast.call("events.subscribe", ["types": ["config."]])["seq"]?.intValue ?? -1
        // The fast subscriber reads while the test produces: a child task, suspended while it waits.
        async let fastSeqs = Self.seqs(of: fast, from: fastStart, count: count)
        for index in 0..<count {
            // Each call changes a key, so each emits one config.changed.
            _ = try await producer.call("config.set", ["deviceClass": .string("box\(index)")])
        }
        #expect(try await fastSeqs == Array(slowStart...(slowStart + count)))

        // The slow subscriber now reads: each gap is announced by one events.lagged, exactly
        // where it is, with its size.
        var previous = slowStart
        var pendingMissed = 0
        var lagged = 0
        while previous + pendingMissed < slowStart + count, let event = try await slow.nextEvent(timeoutMs: 10_000) {
            if event.type == "events.lagged" {
                lagged += 1
                pendingMissed += event.data["missed"]?.intValue ?? 0
                continue
            }
            let seq = try #require(event.seq)
            #expect(seq == previous + 1 + pendingMissed)
            previous = seq
            pendingMissed = 0
        }
        #expect(lagged >= 1)
        #expect(previous + pendingMissed == slowStart + count)
    }

    @Test func observerMayReadButNotControl() async throws {
        let daemon = try await DaemonProcess()
        let asNobody = ["/usr/bin/setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
        let status = try await daemon.ctl(["--json", "status"], prefix: asNobody)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try JSONValue.parse(status.stdout)["bootId"] != nil)
        let denied = try await daemon.ctl(["config", "set", "tenant", "x"], prefix: asNobody)
        #expect(denied.status == 77)
        #expect(denied.stderr.contains("interactive.PermissionDenied"))
        // The same command as root (control) works.
        #expect(try await daemon.ctl(["config", "set", "tenant", "x"]).status == 0)
    }

    @Test func maxClientsRefusesTheConnectionOverTheLimit() async throws {
        let daemon = try await DaemonProcess(config: ["maxClients": 2])
        let first = try await daemon.client()
        let second = try await daemon.client()
        _ = try await first.call("daemon.status")
        _ = try await second.call("daemon.status")
        let third = try await daemon.client()
        let reply = try await third.nextMessage(timeoutMs: 5000)
        guard case .response(let response)? = reply, case .failure(let error) = response.outcome else {
            Issue.record("expected an error reply, got \(String(describing: reply))")
            return
        }
        #expect(error.name == "interactive.TooManyClients")
        await #expect(throws: IPCClientError.self) { _ = try await third.nextLine(timeoutMs: 5000) }
    }

    @Test func subscribeSinceReplaysAndReportsLoss() async throws {
        let daemon = try await DaemonProcess()
        let client = try await daemon.client()
        for index in 0..<5 { _ = try await client.call("config.set", ["deviceClass": .string("d\(index)")]) }
        let replay = try await daemon.client()
        let reply = try await replay.call("events.subscribe", ["since": 2])
        #expect(reply["seq"] == 5)
        #expect(reply["snapshot"]?["config"]?["deviceClass"] == "d4")
        var replayed: [Int] = []
        for _ in 0..<3 {
            if let seq = try await replay.nextEvent(timeoutMs: 5000)?.seq { replayed.append(seq) }
        }
        #expect(replayed == [3, 4, 5])
        let otherBoot = try await daemon.client()
        _ = try await otherBoot.call("events.subscribe", ["since": 1, "bootId": "not-this-boot"])
        #expect(try await otherBoot.nextEvent(timeoutMs: 5000)?.type == "events.lagged")
    }

    /// `start`, then the seq of each event `client` receives until `count` more came (each wait bounded).
    private static func seqs(of client: DaemonConnection, from start: Int, count: Int) async throws -> [Int] {
        var seqs = [start]
        while seqs.count < count + 1, let event = try await client.nextEvent(timeoutMs: 10_000) {
            if let seq = event.seq { seqs.append(seq) }
        }
        return seqs
    }

    private func errorReply(_ client: DaemonConnection) async throws -> JSONValue? {
        guard let line = try await client.nextLine(timeoutMs: 5000) else { return nil }
        return try JSONValue.parse(line)
    }
}
