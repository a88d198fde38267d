import Foundation
import IPCProtocol
import JSONValue

extension DaemonConnection {
    /// Subscribes this connection to events (optionally filtered by type prefixes).
    @discardableResult
    func subscribe(_ types: [String]? = nil) async throws -> JSONValue {
        var params: JSONObject = [:]
        if let types { params["types"] = .array(types.map(JSONValue.string)) }
        return try await call("events.subscribe", .object(params))
    }

    /// Waits for the next event of `type` whose data satisfies `predicate`, skipping others (bounded).
    @discardableResult
    nonisolated func waitForEvent(_ type: String, timeoutMs: Int = 10_000, where predicate: (JSONValue) -> Bool = { _ in true })
        async throws -> EventEnvelope
    {
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        var skipped: [String] = []
        while true {
            let remaining = Int(deadline.timeIntervalSinceNow * 1000)
            guard remaining > 0, let event = try await nextEvent(timeoutMs: remaining) else {
                throw TestFailure("no \(type) event within \(timeoutMs) ms; saw \(skipped.suffix(20))")
            }
            if event.type == type && predicate(event.data) { return event }
            skipped.append("\(event.type) \(event.data.jsonText.prefix(160))")
        }
    }

    /// Asserts that no event of `type` arrives within `ms` (used only to check that something does
    /// not happen, after the thing that would cause it was awaited).
    nonisolated func expectNoEvent(_ type: String, withinMs ms: Int, where predicate: (JSONValue) -> Bool = { _ in true })
        async throws
    {
        let deadline = Date().addingTimeInterval(Double(ms) / 1000)
        while true {
            let remaining = Int(deadline.timeIntervalSinceNow * 1000)
            guard remaining > 0, let event = try await nextEvent(timeoutMs: remaining) else { return }
            if event.type == type && predicate(event.data) {
                throw TestFailure("unexpected \(type) event: \(event.data.jsonText)")
            }
        }
    }
}
