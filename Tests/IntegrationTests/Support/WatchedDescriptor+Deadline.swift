import Runtime

extension WatchedDescriptor {
    /// Waits until the descriptor is readable (or, with `toWrite`, writable) or `deadline` passed;
    /// false when it passed. Read or write until `EAGAIN` before each wait.
    func ready(toWrite: Bool = false, until deadline: ContinuousClock.Instant) async throws -> Bool {
        do {
            try await withTimeout(ContinuousClock.now.duration(to: deadline), "a test's wait for descriptor \(fd)") {
                if toWrite { try await self.writable() } else { try await self.readable() }
            }
            return true
        } catch is TimeoutError {
            return false
        }
    }
}
