import Foundation
import JSONValue
import Runtime
import Testing
@testable import SocketIO

/// Cancellation and reconnection never leak descriptors nor leave two connections open.
@Suite(.serialized) @LoopActor struct ResourceTests {
    /// Open descriptors of this process (the loop's epoll and eventfd are created first).
    static func openDescriptors() -> Int {
        _ = EventLoop.shared
        return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Descriptors are closed on the loop shortly after the owner lets go; poll (bounded).
    static func expectDescriptorsReturn(to baseline: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while openDescriptors() > baseline && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(openDescriptors() <= baseline, "descriptors leaked")
    }

    @Test func cancelledConnectsAndDroppedSocketsLeakNoDescriptor() async throws {
        let peer = try await PeerProcess.start("ws_peer.py")
        defer { peer.stop() }
        let baseline = Self.openDescriptors()
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
        try await Self.expectDescriptorsReturn(to: baseline)
    }

    @Test func clientsThatComeAndGoLeakNoDescriptorAndNeverOverlap() async throws {
        let peer = try await PeerProcess.start("sio_server.py")
        defer { peer.stop() }
        let baseline = Self.openDescriptors()
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
        try await Self.expectDescriptorsReturn(to: baseline)
    }
}
