import IPCProtocol
import JSONValue

/// Predict (typeTimeline 3) and lucky (5) timelines: the button players draw, the dialog shown
/// when the viewer taps it, and the predict results posted into it (cached in the store, so a
/// dialog reopened later, even after a restart, gets them again). The answer itself goes
/// through the overlay manager's answer flow; a lucky reply's number comes back as
/// UPDATE_NUMBER_LUCKY there.
actor PredictManager {
    /// Tenants whose players do not show predict/lucky buttons (seed 000).
    static let tenantsWithoutButtons: Set<String> = ["vtvlive", "onlivetv", "VTVprime"]
    /// How long a button stays at full opacity after a change.
    static let fadeDelay: Duration = .seconds(5)

    private let bus: EventBus
    private let store: Store
    private let overlays: OverlayManager
    private let log: Logger
    private var tenant: String?
    /// The predict/lucky overlays received, by timeline, and the room they arrived in.
    private var timelines: [String: IncomingOverlay] = [:]
    private var room: RoomKey?
    private var buttons: [String: PredictButton] = [:]
    private var fades: [String: Task<Void, Never>] = [:]

    init(bus: EventBus, store: Store, overlays: OverlayManager, log: Logger) {
        self.bus = bus
        self.store = store
        self.overlays = overlays
        self.log = log
    }

    /// The tenant decides whether buttons are shown at all.
    func setTenant(_ tenant: String?) { self.tenant = tenant }

    private var showsButtons: Bool { !(tenant.map(Self.tenantsWithoutButtons.contains) ?? false) }

    /// A predict or lucky overlay arrived in `room`: tracked (`received`) now and, unless it is
    /// kept off screen like any overlay (not targeted, answered, of a room left meanwhile),
    /// shown as a button and as a dialog when the viewer opens it.
    func offer(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) async {
        guard await overlays.admit(overlay, receivedAt: receivedAt, room: room, onScreen: nil) else { return }
        if self.room != room {
            // The first timeline of a room (removeAll emptied those of the previous one).
            timelines = [:]
            self.room = room
        }
        if let previous = timelines[overlay.timelineId], previous.trackingId != overlay.trackingId {
            await overlays.cancelTracking(previous, room: room, reason: .replaced)
        }
        timelines[overlay.timelineId] = overlay
        var button = buttons[overlay.timelineId] ?? PredictButton(
            timelineId: overlay.timelineId, kind: overlay.kind, visible: true, image: .power,
            imageIdle: nil, imagePower: nil, opacity: 1)
        button.kind = overlay.kind
        button.visible = true
        button.image = .power
        button.imageIdle = overlay.raw["imageIdle"]?.stringValue.flatMap(Self.loadableImage) ?? button.imageIdle
        button.imagePower = overlay.raw["imagePower"]?.stringValue.flatMap(Self.loadableImage) ?? button.imagePower
        await update(button)
    }

    /// `action-button-predict`: the button's images and visibility.
    func buttonData(_ payload: JSONValue) async {
        guard let timelineId = payload["timelineId"]?.idString else {
            log.warning("Ignoring action-button-predict without timelineId")
            return
        }
        let kind = OverlayKind(typeTimeline: payload["typeTimeline"]?.lenientDouble.flatMap { Int(exactly: $0) })
        var button = buttons[timelineId] ?? PredictButton(
            timelineId: timelineId, kind: kind == .minigame ? .predict : kind, visible: true,
            image: timelines[timelineId] == nil ? .idle : .power, imageIdle: nil, imagePower: nil, opacity: 1)
        if kind != .minigame { button.kind = kind }
        button.imageIdle = payload["imageIdle"]?.stringValue.flatMap(Self.loadableImage) ?? button.imageIdle
        button.imagePower = payload["imagePower"]?.stringValue.flatMap(Self.loadableImage) ?? button.imagePower
        button.visible = payload["visible"]?.lenientBool ?? true
        await update(button)
    }

    /// `predict-result`: cached, and posted as UPDATE_COUTER into an open dialog.
    func result(_ payload: JSONValue) async {
        guard let timelineId = payload["timelineId"]?.idString else { return }
        let counts: JSONValue = ["answer1": payload["answer1"] ?? .null, "answer2": payload["answer2"] ?? .null]
        do {
            try await store.savePredictResult(timeline: timelineId, counts)
        } catch {
            log.error("Cannot cache the predict result: \(error)", ["INTERACTIVE_TIMELINE_ID": timelineId])
        }
        await overlays.post(timelineId: timelineId, key: "UPDATE_COUTER", data: counts)
    }

    /// `predict.open`: shows the timeline's dialog and posts its cached result, if any.
    func open(timelineId: String) async throws(RPCError) -> JSONValue {
        guard let overlay = timelines[timelineId], let room else {
            throw RPCError.invalidParams("no predict or lucky timeline \(timelineId) in this room")
        }
        guard let overlayId = await overlays.showDialog(overlay, room: room) else {
            throw RPCError.daemon(.noRoom, "no room is joined")
        }
        if let cached = try? await store.predictResult(timeline: timelineId) {
            await overlays.post(overlayId, key: "UPDATE_COUTER", data: cached)
        }
        if var button = buttons[timelineId], button.image != .idle {
            button.image = .idle
            await update(button)
        }
        return PredictOpenResult(overlayId: overlayId, timelineId: timelineId, kind: overlay.kind.rawValue).json
    }

    /// `recall-overlay` of a predict/lucky timeline: its button goes away.
    func recall(timelineId: String) async {
        guard let overlay = timelines.removeValue(forKey: timelineId), let room else { return }
        await overlays.cancelTracking(overlay, room: room, reason: .recalled)
        await overlays.recall(timelineId: timelineId)
        if var button = buttons[timelineId] {
            button.visible = false
            await update(button)
        }
    }

    /// Leaving the room: every button is hidden and unopened timelines stop being tracked.
    func removeAll() async {
        if let room {
            for overlay in timelines.values { await overlays.cancelTracking(overlay, room: room, reason: .removeAll) }
        }
        timelines = [:]
        room = nil
        for (timelineId, var button) in buttons where button.visible {
            button.visible = false
            fades.removeValue(forKey: timelineId)?.cancel()
            if showsButtons { await bus.publish(button.event) }
        }
        buttons = [:]
        await bus.setStatus("predict", .array([]))
    }

    /// Publishes a changed button at full opacity and schedules its fade.
    private func update(_ changed: PredictButton) async {
        var button = changed
        button.opacity = 1
        buttons[button.timelineId] = button
        await bus.setStatus("predict", .array(buttons.values.sorted { $0.timelineId < $1.timelineId }.map(\.json)))
        guard showsButtons else { return }
        await bus.publish(button.event)
        fades.removeValue(forKey: button.timelineId)?.cancel()
        guard button.visible else { return }
        let timelineId = button.timelineId
        fades[timelineId] = Task { [weak self] in
            try? await Task.sleep(for: PredictManager.fadeDelay)
            guard !Task.isCancelled else { return }
            await self?.fade(timelineId)
        }
    }

    private func fade(_ timelineId: String) async {
        guard var button = buttons[timelineId], button.visible, button.opacity != 0.5 else { return }
        button.opacity = 0.5
        buttons[timelineId] = button
        fades.removeValue(forKey: timelineId)
        await bus.publish(button.event)
    }

    /// A button image the player may load; any other URL is ignored (the button keeps its last).
    private static func loadableImage(_ url: String) -> String? { PlayerURL.isLoadable(url) ? url : nil }
}
