import Foundation
import JSONValue
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The project's reference backend (tools/backend), started on a free port of 127.0.0.1.
final class ReferenceBackend: @unchecked Sendable {
    let process = Process()
    private(set) var port: Int = 0
    private let output = LogCollector()
    private let extraArguments: [String]

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts it and waits for its "backend listening on" line (bounded).
    init(arguments: [String] = [], port: Int = 0) async throws {
        extraArguments = arguments
        try await start(port: port)
    }

    private func start(port requested: Int) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "tools.backend", "--port", String(requested), "--log-level", "warning"] + extraArguments
        process.currentDirectoryURL = BuiltProducts.packageRoot
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let collector = output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            collector.append(chunk)
            if chunk.isEmpty { handle.readabilityHandler = nil }
        }
        try process.run()
        guard try await eventually(timeoutMs: 20_000, { collector.text.contains("backend listening on") }) else {
            process.terminate()
            throw TestFailure("reference backend did not start:\n\(output.text)")
        }
        let text = output.text
        guard let range = text.range(of: "http://127.0.0.1:"),
              let parsed = Int(text[range.upperBound...].prefix { $0.isNumber }) else {
            throw TestFailure("no port in backend output:\n\(text)")
        }
        port = parsed
    }

    deinit {
        // No wait (a deinit cannot suspend): Foundation reaps the child.
        if process.isRunning { process.terminate() }
    }

    /// Stops it (SIGTERM) and waits (bounded) for the exit.
    func stop() async throws {
        guard process.isRunning else { return }
        process.terminate()
        guard try await process.exited(withinMs: 10_000) else { throw TestFailure("reference backend did not exit within 10 s") }
    }

    var log: String { output.text }

    /// Daemon flags pointing at this backend.
    func daemonFlags(tenant: String = "onlivev2", os: String = "linuxstb") -> [String] {
        ["--socket-url", baseURL, "--api-url", baseURL, "--tenant", tenant, "--os", os]
    }

    // MARK: Admin API

    @discardableResult
    func admin(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        guard let url = URL(string: baseURL + path) else { throw TestFailure("bad admin path \(path)") }
        var request = URLRequest(url: url, timeoutInterval: 10)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.serialized())
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // Bounded by the request's timeout; the completion handler runs exactly once.
        let (data, status, error) = await withCheckedContinuation { (done: CheckedContinuation<(Data?, Int, (any Error)?), Never>) in
            URLSession.shared.dataTask(with: request) { data, response, error in
                done.resume(returning: (data, (response as? HTTPURLResponse)?.statusCode ?? 0, error))
            }.resume()
        }
        if let error { throw TestFailure("admin \(path): \(error)") }
        guard (200..<300).contains(status), let data else {
            throw TestFailure("admin \(path): HTTP \(status) \(String(decoding: data ?? Data(), as: UTF8.self))")
        }
        return try JSONValue.parse(data)
    }

    /// Emits an overlay to a room, built by the backend (`shape` wrapped or flat).
    @discardableResult
    func emitOverlay(room: String, _ overlay: JSONValue, trackingId: String? = nil, shape: String = "wrapped",
                     event: String = "overlay") async throws -> JSONValue {
        try await admin("POST", "/_admin/emit", ["event": .string(event), "room": .string(room), "overlay": overlay,
                                           "shape": .string(shape), "trackingId": JSONValue(trackingId)])
    }

    /// Emits a raw payload to a room.
    @discardableResult
    func emit(room: String, event: String, _ payload: JSONValue) async throws -> JSONValue {
        try await admin("POST", "/_admin/emit", ["event": .string(event), "room": .string(room), "payload": payload])
    }

    func fault(_ knobs: JSONValue) async throws { try await admin("POST", "/_admin/fault", knobs) }

    /// Items of a recorded log (handshakes, acks, receive-messages, room-events, actions, rest-log).
    func records(_ name: String, _ query: String = "") async throws -> [JSONValue] {
        try await admin("GET", "/_admin/\(name)\(query.isEmpty ? "" : "?" + query)")["items"]?.arrayValue ?? []
    }

    /// Polls a recorded log until `predicate` holds (bounded); returns the items.
    @discardableResult
    func waitForRecords(_ name: String, _ query: String = "", timeoutMs: Int = 10_000,
                        until predicate: ([JSONValue]) -> Bool) async throws -> [JSONValue] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(timeoutMs))
        while true {
            let items = try await records(name, query)
            if predicate(items) { return items }
            guard clock.now < deadline else { throw TestFailure("\(name) never matched; last: \(items)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A standard minigame overlay object for tests.
    func quiz(_ timelineId: String, alignment: JSONValue = 4, duration: Int = 30, targets: [String] = ["all"],
              extra: JSONObject = [:]) -> JSONValue {
        var overlay: JSONObject = [
            "timelineId": .string(timelineId), "typeTimeline": 1,
            "url": .string("\(baseURL)/templates/quiz.html?id=\(timelineId)"),
            "position": ["alignment": alignment, "width": 40, "height": 30], "duration": .number(Double(duration)),
            "targets": .array(targets.map(JSONValue.string)), "traceLock": false, "requireVip": false, "requireBet": false,
            "requireFanclub": false, "betAmount": 0,
        ]
        for (key, value) in extra { overlay[key] = value }
        return .object(overlay)
    }
}
