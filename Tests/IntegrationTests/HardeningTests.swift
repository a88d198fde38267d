import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Hostile input from local users and from the backend, against the real daemon (issue 12).
@Suite struct HardeningTests {
    private func rpcCode(_ body: () async throws -> Void) async -> Int? {
        do {
            try await body()
        } catch let IPCClientError.rpc(error) {
            return error.code
        } catch {
            return nil
        }
        return nil
    }

    @Test func controlCharactersInValuesThatReachHeadersAreRefused() async throws {
        let daemon = try await DaemonProcess()
        let client = try await daemon.client()
        #expect(await rpcCode { _ = try await client.call("session.login", ["token": "tokC\rX-Injected-Token: yes", "userId": "u1"]) } == -32602)
        #expect(await rpcCode { _ = try await client.call("session.login", ["token": "tok", "userId": "u\n1"]) } == -32602)
        #expect(await rpcCode { _ = try await client.call("config.set", ["tenant": "onlive\u{0}v2"]) } == -32602)
        #expect(await rpcCode { _ = try await client.call("config.set", ["insecureTLS": 1.5]) } == -32602)
        #expect(try await client.call("daemon.status")["session"]?["loggedIn"] == false)
    }

    @Test func requestIdsComeBackExactlyAsSent() async throws {
        let daemon = try await DaemonProcess()
        let client = try await daemon.client()
        for id in ["12345678901234567890", "9007199254740993", "-1.50"] {
            try await client.send(raw: Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"daemon.hello"}"#.utf8) + [0x0A])
            let line = try #require(try await client.nextLine(timeoutMs: 5_000))
            #expect(String(decoding: line, as: UTF8.self).contains(#""id":\#(id),"#), "\(id)")
        }
    }

    @Test func aSocketPathThatIsNotASocketIsLeftAlone() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/precious.txt"
        try "keep me".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await runCommand([BuiltProducts.daemon, "--socket", path, "--state-directory", directory.path + "/state",
                                     "--config", directory.path + "/none.json", "--log-target", "stderr"], timeoutMs: 10_000)
        #expect(result.status != 0)
        #expect(result.stderr.contains("is not a socket"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
    }

    /// Observers (here: nobody) fill every slot they may; the slot kept for the control role
    /// still lets root in.
    @Test func observersCannotLockPlayersOut() async throws {
        let directory = try TemporaryDirectory()
        let configPath = directory.path + "/config.json"
        try #"{"maxClients": 8}"#.write(toFile: configPath, atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess(arguments: ["--config", configPath], directory: directory)
        let script = """
            import os, socket, sys
            path = sys.argv[1]
            def hello(s):
                try:
                    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"daemon.hello"}\\n')
                except OSError:
                    pass  # a refused connection may be closed before the request is sent
                data = b''
                while not data.endswith(b'\\n'):
                    try:
                        chunk = s.recv(65536)
                    except OSError:
                        break
                    if not chunk: break
                    data += chunk
                return 'error' if b'TooManyClients' in data else ('ok' if b'"result"' in data else 'closed')
            read_end, write_end = os.pipe()
            go_read, go_write = os.pipe()
            child = os.fork()
            if child == 0:
                os.setgid(65534); os.setuid(65534)
                held = []
                results = []
                for _ in range(9):
                    s = socket.socket(socket.AF_UNIX); s.connect(path); results.append(hello(s)); held.append(s)
                os.write(write_end, (' '.join(results) + '\\n').encode())
                os.read(go_read, 1)
                os._exit(0)
            os.close(write_end)
            observers = b''
            while not observers.endswith(b'\\n'):
                chunk = os.read(read_end, 100)
                if not chunk: break
                observers += chunk
            root = socket.socket(socket.AF_UNIX); root.connect(path)
            print('observers', observers.decode().strip())
            print('root', hello(root))
            os.write(go_write, b'x'); os.waitpid(child, 0)
            """
        let result = try await runCommand(["/usr/bin/python3", "-c", script, daemon.socketPath], timeoutMs: 20_000)
        #expect(result.stdout.contains("observers ok ok ok ok ok ok ok error error"), "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("root ok"), "\(result.stdout) \(result.stderr)")
        #expect(try await daemon.waitForLog("the remaining connections are kept for players"))
    }

    /// An observer repeating a call it may not make gets every refusal, and the log one line
    /// for them (the next one, 10 s later at the earliest, counts those not logged).
    @Test func deniedCallsAreLoggedOncePerClientAndInterval() async throws {
        let daemon = try await DaemonProcess()
        let script = """
            import os, socket, sys
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            for i in range(200):
                s.sendall(('{"jsonrpc":"2.0","id":%d,"method":"config.set","params":{"tenant":"x"}}\\n' % i).encode())
            data = b''
            while data.count(b'\\n') < 200:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print('denied', data.count(b'needs the control role'))
            """
        let result = try await runCommand(["/usr/bin/python3", "-c", script, daemon.socketPath], timeoutMs: 20_000)
        #expect(result.stdout.contains("denied 200"), "\(result.stdout) \(result.stderr)")
        // Everything logged before the stop is read once its line is.
        #expect(try await daemon.stop() == 0)
        #expect(try await daemon.waitForLog("Stopping (signal"))
        #expect(daemon.stderr.contains("Permission denied: uid 65534"))
        #expect(daemon.stderr.components(separatedBy: "Permission denied").count - 1 == 1, "\(daemon.stderr)")
    }

    /// A client that sends requests and never reads the replies is cut off once 1 MiB of them
    /// waits; others are served all along.
    @Test func aClientLeavingRepliesUnreadIsCutOff() async throws {
        let daemon = try await DaemonProcess()
        let greedy = try await daemon.client()
        let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#.utf8) + [0x0A]
        var sent = 0
        do {
            for _ in 0..<20_000 {
                try await greedy.send(raw: request)
                sent += 1
            }
        } catch {
            // The daemon shut the connection: the send fails.
        }
        #expect(try await daemon.waitForLog("leaves its replies unread", timeoutMs: 30_000), "sent \(sent)")
        let other = try await daemon.client()
        #expect(try await other.call("daemon.hello")["daemon"] == "interactived")
    }

    @Test func onlyHTTPURLsReachPlayers() async throws {
        let live = try await LiveFixture()
        let backend = live.backend
        let cases = [("trk-file", "file:///etc/passwd"), ("trk-js", "javascript:alert(1)"),
                     ("trk-data", "data:text/html,<b>x</b>"), ("trk-chrome", "chrome://settings")]
        for (trackingId, url) in cases {
            try await backend.emitOverlay(room: "m1", backend.quiz("tl-\(trackingId)", extra: ["url": .string(url)]), trackingId: trackingId)
        }
        for (trackingId, _) in cases {
            let rendered = try await live.waitForAck(trackingId, "rendered")
            #expect(rendered["payload"]?["clientContext"]?["custom"]?["cancelReason"] == "invalid_overlay_state", "\(trackingId)")
        }
        try await live.player.expectNoEvent("overlay.show", withinMs: 300)
        #expect(try await live.status()["overlays"]?.arrayValue?.isEmpty == true)
    }

    /// The overflow that once crashed every box: an `_emitTimestamp` of Int64.min.
    @Test func anAbsurdEmitTimestampIsIgnored() async throws {
        let live = try await LiveFixture()
        try await live.backend.emit(room: "m1", event: "overlay", [
            "data": live.backend.quiz("tl-min"), "_trackingId": "trk-min", "_emitTimestamp": -9223372036854775808,
        ])
        try await live.player.waitForEvent("overlay.show") { $0["timelineId"] == "tl-min" }
        let received = try await live.waitForAck("trk-min", "received")
        #expect(received["payload"]?["clientContext"]?["receiveLatencyMs"] == .null)
        #expect(try await live.player.call("daemon.hello")["daemon"] == "interactived")
    }
}
