import Foundation
import Runtime
import RuntimeTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tests' own command runner: status and output, the bound on its wait, and the wait for a
/// killed peer's end.
@Suite struct TestCommandTests {
    @Test func aCommandsStatusAndBothOutputsAreReturned() throws {
        let outcome = try TestCommand.runBlocking("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(outcome.termination == .exited(status: 3))
        #expect(!outcome.succeeded)
        #expect(outcome.output == "out\nerr\n")
    }

    @Test func aCommandThatOutlivesItsLimitIsKilled() async throws {
        let outcome = try await TestCommand.run("/bin/sleep", ["30"], timeout: .milliseconds(200))
        #expect(outcome.termination == .signalled(SIGKILL))
    }

    /// A child it started holds the output too: the whole process group is killed.
    @Test func aCommandsChildrenAreKilledWithIt() throws {
        let started = ContinuousClock.now
        let outcome = try TestCommand.runBlocking("/bin/sh", ["-c", "sleep 30 & sleep 30"], timeout: .milliseconds(200))
        #expect(outcome.termination == .signalled(SIGKILL))
        // Not the 5 s the output is read for at most after the kill: the background sleep died too.
        #expect(started.duration(to: .now) < .seconds(5))
    }

    @Test func aProgramThatIsNotThereIsAnError() {
        #expect(throws: ChildProcessError.self) { try TestCommand.runBlocking("/nonexistent/program", []) }
    }

    /// As the peers of SocketIOTests and HTTPTests are: started by Foundation, which reaps them.
    @Test func theEndOfAKilledPeerIsSeen() throws {
        let peer = Process()
        peer.executableURL = URL(fileURLWithPath: "/bin/sleep")
        peer.arguments = ["30"]
        try peer.run()
        #expect(!TestCommand.waitForEnd(of: peer.processIdentifier, timeout: .milliseconds(50)), "it still runs")
        kill(peer.processIdentifier, SIGKILL)
        #expect(TestCommand.waitForEnd(of: peer.processIdentifier))
    }
}
