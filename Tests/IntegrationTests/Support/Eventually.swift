import Foundation

/// The integration tests' one bounded wait: checks `condition` every `everyMs` until it holds
/// (true) or `timeoutMs` passed (false). It suspends between checks (`Task.sleep`), so a waiting
/// test holds none of the test runner's threads.
func eventually(timeoutMs: Int, everyMs: Int = 20, _ condition: () async throws -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
    while true {
        if try await condition() { return true }
        guard clock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(everyMs))
    }
}

extension Process {
    /// Waits (bounded, suspending) until the process ended; false when it still runs after `timeoutMs`.
    func exited(withinMs timeoutMs: Int) async throws -> Bool {
        try await eventually(timeoutMs: timeoutMs) { !isRunning }
    }
}
