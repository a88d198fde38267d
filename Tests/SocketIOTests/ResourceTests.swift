import Foundation
import JSONValue
import Runtime
import Testing
@testable import SocketIO

/// Cancellation and reconnection never leak a socket nor leave two connections open.
@Suite(.serialized) @LoopActor struct ResourceTests {
    /// This process's open TCP sockets whose local or remote port is `port` (one peer's). Other
    /// suites run beside this one in the same process and open descriptors of their own, so a
    /// count of every descriptor would blame this suite for theirs; a leaked socket stays in
    /// /proc/net/tcp with the peer's port for as long as its descriptor is open.
    static func openSockets(port: Int) -> Int {
        let socketInodes = Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                  target.hasPrefix("socket:[") else { return nil }
            return String(target.dropFirst("socket:[".count).dropLast())
        })
        let portSuffix = ":" + String(format: "%04X", port)
        var count = 0
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: procfs gives such a table a page at a time.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile(),
                  let text = String(data: data, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(portSuffix) || fields[2].hasSuffix(portSuffix),
                      socketInodes.contains(String(fields[9])) else { continue }
                count += 1
            }
        }
        return count
    }

    /// Sockets are closed on the loop shortly after the owner lets go; poll (bounded).
    static func expectNoSocketLeft(port: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while openSockets(port: port) > 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(openSockets(port: port) == 0, "sockets to the peer leaked")
    }

    @Test func cancelledConnectsAndDroppedSocketsLeakNoDescriptor() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let url = "ws://127.0.0.1:\(peer.port)/headers"
        var generator = SplitMix64(seed: 7)
        for round in 0..<30 {
            let task = Task { try await WebSocket.connect(url: url, timeout: .seconds(5)) }
            // Cancel at a different point of the connection each round (TCP, upgrade, done).
            for _ in 0..<Int.random(in: 0...40, using: &generator) { await Task.yield() }
            if round % 3 != 0 { task.cancel() }
            if let socket = try? await task.value {
                if round % 2 == 0 { socket.close() }
            }
        }
        try await Self.expectNoSocketLeft(port: peer.port)
    }

    @Test func clientsThatComeAndGoLeakNoDescriptorAndNeverOverlap() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let harness = ClientHarness(SocketIOConfiguration(url: "http://127.0.0.1:\(peer.port)", reconnect: ReconnectPolicy(baseMs: 50, capMs: 100)))
        let client = harness.client
        client.connect()
        _ = try await harness.connected()
        // Concurrent reconnect requests: each one waits for the previous connection to end.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await client.reconnectNow() } }
        }
        _ = try await harness.connected()
        let count = try await client.emitWithAck("connections", [], timeout: .seconds(5))
        #expect(count.args == [1])
        #expect(Self.openSockets(port: peer.port) == 1, "the live connection is the one socket to the peer")
        let lines = await peer.lines().filter { $0.hasPrefix("CONNECT ") || $0.hasPrefix("DISCONNECT ") }
        var live = 0
        for line in lines {
            live += line.hasPrefix("CONNECT ") ? 1 : -1
            #expect(live <= 1, "two live connections: \(lines)")
        }
        // A disconnect in the middle of a connection attempt.
        await client.reconnectNow()
        await client.disconnect()
        #expect(!client.isRunning)
        try await Self.expectNoSocketLeft(port: peer.port)
    }
}
