import Foundation
import IPCProtocol
import JSONValue
import Testing

/// A server's DISCONNECT is not the end (issue 20, item 9): a backend that disconnects its
/// clients (on a graceful shutdown) left every room in `error` until a new `room.join`; now the
/// daemon connects again after 5 to 10 s and joins the room again.
@Suite struct ServerDisconnectTests {
    @Test func aServersDisconnectIsFollowedByANewConnectionAndTheRoomJoinedAgain() async throws {
        let live = try await LiveFixture(viewer: .alice)
        let before = try await live.socketId()
        try await live.backend.fault(["disconnectSockets": true])
        let reconnecting = try await live.player.waitForEvent("connection.state") { $0["state"] == "reconnecting" }
        let retryIn = reconnecting.data["retryInMs"]?.intValue ?? 0
        #expect(retryIn >= 5_000 && retryIn <= 10_000, "\(reconnecting.data)")
        #expect(reconnecting.data["error"] == "disconnected by the server")
        let room = try await live.player.waitForEvent("room.state", timeoutMs: 20_000) { $0["state"] != "joining" }
        #expect(room.data["state"] == "joined", "\(room.data)")
        #expect(try await live.socketId() != before)
        #expect(try await live.backend.records("room-events", "type=join-room").count == 2)
        // The room works on the new connection.
        try await live.show(live.backend.quiz("tl-after"))
    }
}
