import Foundation
import JSONValue
import XCTest
@testable import SocketIO

/// Cancellation and reconnection never leak descriptors nor leave two connections open.
final class ResourceTests: XCTestCase {
    var peer: PeerProcess!

    override func tearDown() async throws {
        peer?.stop()
    }

    /// Open descriptors of this process (the reactor's epoll and eventfd are created first).
    func openDescriptors() -> Int {
        _ = Reactor.shared
        return (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Descriptors are closed on the reactor thread shortly after the owner lets go; poll (bounded).
    func assertDescriptorsReturn(to baseline: Int, file: StaticString = #filePath, line: UInt = #line) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while openDescriptors() > baseline && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        XCTAssertLessThanOrEqual(openDescriptors(), baseline, "descriptors leaked", file: file, line: line)
    }

    func testCancelledConnectsAndDroppedSocketsLeakNoDescriptor() async throws {
        peer = try await PeerProcess.start("ws_peer.py")
        let baseline = openDescriptors()
        let url = "ws://127.0.0.1:\(peer.port)/headers"
        var generator = SeededRandom(state: 7)
        for round in 0..<30 {
            let task = Task { try await WebSocket.connect(url: url, timeout: .seconds(5)) }
            // Cancel at a different point of the connection each round (DNS, TCP, upgrade, done).
            for _ in 0..<Int.random(in: 0...40, using: &generator) { await Task.yield() }
            if round % 3 != 0 { task.cancel() }
            if let socket = try? await task.value {
                if round % 2 == 0 { socket.close() }
            }
        }
        try await assertDescriptorsReturn(to: baseline)
    }

    func testClientsThatComeAndGoLeakNoDescriptorAndNeverOverlap() async throws {
        peer = try await PeerProcess.start("sio_server.py")
        let baseline = openDescriptors()
        let harness = ClientHarness(SocketIOConfiguration(url: "http://127.0.0.1:\(peer.port)", reconnect: ReconnectPolicy(baseMs: 50, capMs: 100)))
        let client = harness.client
        await client.connect()
        _ = try await harness.connected()
        // Concurrent reconnect requests: each one waits for the previous connection to end.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await client.reconnectNow() } }
        }
        let last = try await harness.connected()
        let count = try await client.emitWithAck("connections", [], timeout: .seconds(5))
        XCTAssertEqual(count.args, [1])
        let lines = await peer.lines().filter { $0.hasPrefix("CONNECT ") || $0.hasPrefix("DISCONNECT ") }
        var live = 0
        for line in lines {
            live += line.hasPrefix("CONNECT ") ? 1 : -1
            XCTAssertLessThanOrEqual(live, 1, "two live connections: \(lines)")
        }
        _ = last
        // A disconnect in the middle of a connection attempt.
        await client.reconnectNow()
        await client.disconnect()
        let running = await client.isRunning
        XCTAssertFalse(running)
        try await assertDescriptorsReturn(to: baseline)
    }
}
