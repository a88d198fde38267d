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
        let client = try daemon.client()
        let hello = try client.call("daemon.hello", ["client": "test", "protocol": 1])
        #expect(hello["daemon"] == "interactived")
        #expect(hello["protocol"] == 1)
        let status = try client.call("daemon.status")
        #expect(status["bootId"] == hello["bootId"])
        #expect(status["session"]?["loggedIn"] == false)

        try client.send(raw: Array("{not json\n".utf8))
        #expect(try errorReply(client)?["error"]?["code"] == -32700)
        try client.send(raw: Array(#"[{"jsonrpc":"2.0","id":1,"method":"daemon.status"}]"#.utf8) + [0x0A])
        #expect(try errorReply(client)?["error"]?["code"] == -32600)
        try client.send(raw: Array(#"{"jsonrpc":"2.0","id":9,"method":"no.such"}"#.utf8) + [0x0A])
        let unknown = try errorReply(client)
        #expect(unknown?["error"]?["code"] == -32601)
        #expect(unknown?["id"] == 9)
        #expect(throws: IPCClientError.self) { try client.call("session.login", ["userId": "u"]) }
        // The connection is still usable after every bad line.
        #expect(try client.call("daemon.status")["bootId"] == hello["bootId"])
    }

    @Test func twoHundredConcurrentClients() async throws {
        let daemon = try await DaemonProcess()
        let failures = LogCollector()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            do {
                let client = try daemon.client()
                let hello = try client.call("daemon.hello", ["client": .string("c\(index)"), "protocol": 1])
                guard hello["daemon"] == "interactived" else { throw TestFailure("bad hello \(hello)") }
                _ = try client.call("daemon.status")
            } catch {
                failures.append(Data("client \(index): \(error)\n".utf8))
            }
        }
        #expect(failures.text.isEmpty, "\(failures.text)")
    }

    @Test func badClientsDoNotDisturbOthers() async throws {
        let daemon = try await DaemonProcess()
        let good = try daemon.client()
        let garbage = try daemon.client()
        let huge = try daemon.client()
        let quitter = try daemon.client()

        var random = SystemRandomNumberGenerator()
        try garbage.send(raw: (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) } + [0x0A])
        // A 2 MiB line: one -32600 with id null, then the connection goes on.
        try huge.send(raw: [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20) + [0x0A])
        let oversized = try errorReply(huge)
        #expect(oversized?["error"]?["code"] == -32600)
        #expect(oversized?["id"] == .null)
        #expect(try huge.call("daemon.status")["bootId"] != nil)
        // A client that disconnects in the middle of a line.
        try quitter.send(raw: Array(#"{"jsonrpc":"2.0","id":1,"meth"#.utf8))
        _ = consume quitter

        for _ in 0..<20 { #expect(try good.call("daemon.status")["bootId"] != nil) }
        #expect(try garbage.call("daemon.hello", ["client": "again", "protocol": 1])["daemon"] == "interactived")
    }

    @Test func slowSubscriberLagsWhileFastOneGetsEverything() async throws {
        let daemon = try await DaemonProcess()
        let slow = try daemon.client()
        let producer = try daemon.client()
        let slowStart = try slow.call("events.subscribe", ["types": ["config."]])["seq"]?.intValue ?? -1

        let count = 6000
        let fastSeqs = Locked<[Int]>([])
        let subscribed = Locked(false)
        let readerDone = Locked(false)
        let socketPath = daemon.socketPath
        // A thread of its own: the fast reader blocks on its socket while the test produces, and
        // must not hold one of the test runner's threads.
        Thread {
            defer { readerDone.withLock { $0 = true } }
            guard let fast = try? IPCClient(path: socketPath),
                  let start = try? fast.call("events.subscribe", ["types": ["config."]])["seq"]?.intValue else {
                subscribed.withLock { $0 = true }
                return
            }
            fastSeqs.withLock { $0.append(start) }
            subscribed.withLock { $0 = true }
            while fastSeqs.current.count < count + 1, let event = try? fast.nextEvent(timeoutMs: 10_000) {
                if let seq = event.seq { fastSeqs.withLock { $0.append(seq) } }
            }
        }.start()
        #expect(try await eventually(timeoutMs: 10_000) { subscribed.current })
        for index in 0..<count {
            // Each call changes a key, so each emits one config.changed.
            _ = try producer.call("config.set", ["deviceClass": .string("box\(index)")])
        }
        #expect(try await eventually(timeoutMs: 60_000) { readerDone.current })
        #expect(fastSeqs.current == Array(slowStart...(slowStart + count)))

        // The slow subscriber now reads: each gap is announced by one events.lagged, exactly
        // where it is, with its size.
        var previous = slowStart
        var pendingMissed = 0
        var lagged = 0
        while previous + pendingMissed < slowStart + count, let event = try slow.nextEvent(timeoutMs: 10_000) {
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
        let first = try daemon.client()
        let second = try daemon.client()
        _ = try first.call("daemon.status")
        _ = try second.call("daemon.status")
        let third = try daemon.client()
        let reply = try third.nextMessage(timeoutMs: 5000)
        guard case .response(let response)? = reply, case .failure(let error) = response.outcome else {
            Issue.record("expected an error reply, got \(String(describing: reply))")
            return
        }
        #expect(error.name == "interactive.TooManyClients")
        #expect(throws: IPCClientError.self) { _ = try third.nextLine(timeoutMs: 5000) }
    }

    @Test func subscribeSinceReplaysAndReportsLoss() async throws {
        let daemon = try await DaemonProcess()
        let client = try daemon.client()
        for index in 0..<5 { _ = try client.call("config.set", ["deviceClass": .string("d\(index)")]) }
        let replay = try daemon.client()
        let reply = try replay.call("events.subscribe", ["since": 2])
        #expect(reply["seq"] == 5)
        #expect(reply["snapshot"]?["config"]?["deviceClass"] == "d4")
        let replayed = try (0..<3).compactMap { _ in try replay.nextEvent(timeoutMs: 5000)?.seq }
        #expect(replayed == [3, 4, 5])
        let otherBoot = try daemon.client()
        _ = try otherBoot.call("events.subscribe", ["since": 1, "bootId": "not-this-boot"])
        #expect(try otherBoot.nextEvent(timeoutMs: 5000)?.type == "events.lagged")
    }

    private func errorReply(_ client: IPCClient) throws -> JSONValue? {
        guard let line = try client.nextLine(timeoutMs: 5000) else { return nil }
        return try JSONValue.parse(line)
    }
}
