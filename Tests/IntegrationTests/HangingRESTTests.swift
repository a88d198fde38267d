import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// REST never blocks anything (issue 11, item 4): REST calls wait on the event loop, so calls
/// hanging at the backend hold no thread, local requests are still answered and SIGTERM still
/// stops the daemon.
@Suite struct HangingRESTTests {
    @Test func localRequestsAreAnsweredAndSIGTERMStopsWhileAHundredRESTCallsHang() throws {
        let live = try LiveFixture(viewer: .alice, config: ["httpTimeoutMs": 600_000])
        let backend = live.backend
        try backend.fault(["restDelayMs": 600_000])
        // One local connection per call: a connection's requests are handled one after the other.
        let callers = try (0..<100).map { _ in try live.daemon.client() }
        for caller in callers {
            try caller.send(raw: RPCRequest(id: .number(1), method: "interactive.status", params: ["mediaId": "m1"]).line())
        }
        let deadline = Date().addingTimeInterval(20)
        while try backend.admin("GET", "/_admin/state")["restInFlight"] != 100 {
            guard Date() < deadline else { throw TestFailure("the backend never held 100 REST calls") }
            usleep(50_000)
        }

        let probe = try live.daemon.client()
        var slowest = 0.0
        for index in 0..<50 {
            let started = Date()
            let method = ["daemon.hello", "daemon.status", "player.state"][index % 3]
            _ = try probe.call(method, method == "player.state" ? ["state": "playing", "position": 1] : nil, timeoutMs: 2000)
            slowest = max(slowest, Date().timeIntervalSince(started))
        }
        #expect(slowest < 0.5, "a local request waited \(slowest) s behind the hanging REST calls")
        #expect(try backend.admin("GET", "/_admin/state")["restInFlight"] == 100)

        let stopping = Date()
        live.daemon.signal(SIGTERM)
        #expect(try live.daemon.waitForExit(timeoutMs: 5000) == 0)
        #expect(Date().timeIntervalSince(stopping) < 5)
        withExtendedLifetime(callers) {}
    }
}
