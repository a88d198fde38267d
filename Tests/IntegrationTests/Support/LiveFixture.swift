import Foundation
import IPCProtocol
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// The built-in viewers of the reference backend (docs/backend.md, Users).
enum BackendViewer: String, Sendable, CaseIterable {
    /// VIP and allowed to bet.
    case alice
    /// Neither VIP nor allowed to bet.
    case bob
    /// VIP, not allowed to bet.
    case carol
    /// Allowed to bet, not VIP.
    case dave

    var token: String { "token-\(rawValue)" }
    var displayName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// One live room against the reference backend: a backend, the real daemon pointed at it, and a
/// player connection that joined the room and subscribed to the events.
final class LiveFixture: @unchecked Sendable {
    private(set) var backend: ReferenceBackend
    let daemon: DaemonProcess
    let player: DaemonConnection
    let mediaId: String
    let tenant: String

    /// `config` is applied with `config.set` before the viewer logs in and joins, so settings that
    /// rebuild the connection (reconnect) do not disturb the room.
    init(tenant: String = "onlivev2", viewer: BackendViewer? = nil, fanclub: Bool = false, mediaId: String = "m1",
         config: JSONValue? = nil, events: [String]? = ["overlay.", "player.", "answer.", "login.", "fanclub.", "room.", "connection."],
         directory: TemporaryDirectory? = nil, backend existing: ReferenceBackend? = nil, arguments: [String] = []) async throws {
        if let existing { backend = existing } else { backend = try await ReferenceBackend() }
        self.tenant = tenant
        self.mediaId = mediaId
        daemon = try await DaemonProcess(arguments: backend.daemonFlags(tenant: tenant) + arguments, directory: directory)
        player = try await daemon.client()
        if let config { _ = try await player.call("config.set", config) }
        if let viewer { try await Self.login(player, viewer) }
        let joined = try await player.call("room.join", ["mediaId": .string(mediaId), "mode": "live", "fanclub": .bool(fanclub)])
        guard joined["state"] == "joined" else { throw TestFailure("room.join replied \(joined)") }
        if let events { try await player.subscribe(events) }
    }

    static func login(_ client: DaemonConnection, _ viewer: BackendViewer) async throws {
        _ = try await client.call("session.login", ["token": .string(viewer.token), "userId": .string(viewer.rawValue),
                                              "displayName": .string(viewer.displayName)])
    }

    /// Stops the backend and starts a new one on the same port (the daemon's URLs stay valid).
    func restartBackend(whileStopped: () async throws -> Void = {}) async throws {
        let port = backend.port
        try await backend.stop()
        try await whileStopped()
        backend = try await ReferenceBackend.onPort(port)
    }

    // MARK: Overlays

    /// Emits an overlay and waits for its `overlay.show`; returns the event.
    @discardableResult
    func show(_ overlay: JSONValue, trackingId: String? = nil, shape: String = "wrapped", event: String = "overlay")
        async throws -> EventEnvelope
    {
        try await backend.emitOverlay(room: mediaId, overlay, trackingId: trackingId, shape: shape, event: event)
        let timelineId = overlay["timelineId"]
        return try await player.waitForEvent("overlay.show") { $0["timelineId"] == timelineId }
    }

    /// `show`, then the player attaches it and reports it loaded (rendered success).
    @discardableResult
    func showLoaded(_ overlay: JSONValue, trackingId: String? = nil) async throws -> String {
        let overlayId = try await show(overlay, trackingId: trackingId).overlayId
        _ = try await player.call("overlay.attached", ["overlayId": .string(overlayId)])
        _ = try await player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"])
        return overlayId
    }

    /// Reports what the template posted (`overlay.bridge`); `message` is an object or a JSON string.
    @discardableResult
    func bridge(_ overlayId: String, _ message: JSONValue, on client: DaemonConnection? = nil) async throws -> JSONValue {
        try await (client ?? player).call("overlay.bridge", ["overlayId": .string(overlayId), "message": message])
    }

    /// The template's answer (`INTERACTIVE_ACTION_REPORT`), then the `answer.result` it leads to.
    @discardableResult
    func answer(_ overlayId: String, _ answer: JSONValue = ["answer": ["choice": "A"]]) async throws -> JSONValue {
        try await bridge(overlayId, ["type": "INTERACTIVE_ACTION_REPORT", "data": answer])
        return try await player.waitForEvent("answer.result") { $0["overlayId"] == .string(overlayId) }.data
    }

    /// Every `overlay.show` until the one of `timelineId` (included): the timelines, in order.
    func shownTimelines(until timelineId: String, timeoutMs: Int = 10_000) async throws -> [String] {
        var shown: [String] = []
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        while true {
            let remaining = Int(deadline.timeIntervalSinceNow * 1000)
            guard remaining > 0, let event = try await player.nextEvent(timeoutMs: remaining) else {
                throw TestFailure("no overlay.show of \(timelineId) within \(timeoutMs) ms; shown \(shown)")
            }
            guard event.type == "overlay.show", let shownId = event.data["timelineId"]?.stringValue else { continue }
            shown.append(shownId)
            if shownId == timelineId { return shown }
        }
    }

    // MARK: Status and tracking

    func status() async throws -> JSONValue { try await player.call("daemon.status") }

    /// The live Socket.IO socket id (`daemon.status` connection.socketId).
    func socketId() async throws -> String {
        guard let id = try await status()["connection"]?["socketId"]?.stringValue else { throw TestFailure("no socketId in daemon.status") }
        return id
    }

    /// The recorded `emit-ack`s of one tracking id (optionally one stage), oldest first.
    func acks(_ trackingId: String, stage: String? = nil) async throws -> [JSONValue] {
        try await backend.records("acks", "trackingId=\(trackingId)" + (stage.map { "&stage=\($0)" } ?? ""))
    }

    /// Waits until the backend recorded `stage` of `trackingId`; returns the first such ack.
    @discardableResult
    func waitForAck(_ trackingId: String, _ stage: String, timeoutMs: Int = 10_000) async throws -> JSONValue {
        let items = try await backend.waitForRecords("acks", "trackingId=\(trackingId)&stage=\(stage)", timeoutMs: timeoutMs) { !$0.isEmpty }
        return items[0]
    }

    /// Waits until the daemon holds `count` pending acks, all of them in its store (what a
    /// kill -9 cannot lose): `daemon.status` waits only so long for tracking.
    func waitForPendingAcksStored(_ count: Int, timeoutMs: Int = 10_000) async throws {
        try await waitForTracking("not \(count) pending acks, all stored", timeoutMs: timeoutMs, everyMs: 20) {
            $0?["pendingAcks"] == .number(Double(count)) && $0?["unstoredWrites"] == 0
        }
    }

    /// Waits until the store holds everything a restart needs (`unstoredWrites` 0): a kill -9
    /// from now on loses nothing.
    func waitForTrackingStored(timeoutMs: Int = 10_000) async throws {
        try await waitForTracking("tracking not all stored", timeoutMs: timeoutMs, everyMs: 20) { $0?["unstoredWrites"] == 0 }
    }

    /// Waits until the daemon holds no pending ack any more (every queued ack left for good).
    func waitForAcksDelivered(timeoutMs: Int = 10_000) async throws {
        try await waitForTracking("acks still pending", timeoutMs: timeoutMs, everyMs: 50) { $0?["pendingAcks"] == 0 }
    }

    /// Polls `daemon.status`'s `tracking` until `done` holds; else fails with `failure` and what it last said.
    private func waitForTracking(_ failure: String, timeoutMs: Int, everyMs: Int,
                                 until done: @escaping (JSONValue?) -> Bool) async throws {
        var tracking: JSONValue?
        guard try await eventually(timeoutMs: timeoutMs, everyMs: everyMs, {
            tracking = try await status()["tracking"]
            return done(tracking)
        }) else { throw TestFailure("\(failure) after \(timeoutMs) ms: \(tracking ?? .null)") }
    }
}

extension EventEnvelope {
    /// The `overlayId` of an overlay event (empty when it has none).
    var overlayId: String { data["overlayId"]?.stringValue ?? "" }

    /// The daemon's time of the event.
    var date: Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: time)
    }
}

extension ReferenceBackend {
    /// A new backend on `port` (used to restart one: the daemon reconnects to the same URL).
    static func onPort(_ port: Int) async throws -> ReferenceBackend {
        // The old process released the port when it exited; a socket in TIME_WAIT does not block
        // the new one (asyncio servers set SO_REUSEADDR), but be tolerant of a slow release.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(10))
        while true {
            do {
                return try await ReferenceBackend(port: port)
            } catch {
                guard clock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    /// The tracked overlay's `emit-ack` stages in the order the backend recorded them.
    func ackStages(_ trackingId: String) async throws -> [String] {
        try await records("acks", "trackingId=\(trackingId)").compactMap { $0["stage"]?.stringValue }
    }
}

/// The query items of a URL, by name.
func urlQueryItems(_ url: String) -> [String: String] {
    var items: [String: String] = [:]
    for item in URLComponents(string: url)?.queryItems ?? [] { items[item.name] = item.value ?? "" }
    return items
}
