import IPCProtocol
import JSONValue
import Runtime

/// Predict (typeTimeline 3) and lucky (5) timelines: a thin shell around `PredictCore` that
/// feeds it what the backend and the players say and performs what it decides: the button
/// players draw, the dialog shown when the viewer taps it, and the predict results posted into
/// it (cached in the store, so a dialog reopened later, even after a restart, gets them again).
/// The answer itself goes through the overlay manager's answer flow; a lucky reply's number
/// comes back as UPDATE_NUMBER_LUCKY there. `run()` owns its background work (the store writes
/// and the fade timer).
@LoopActor
final class PredictManager {

    private var core = PredictCore()
    private let bus: EventBus
    private let store: Store
    private let overlays: OverlayManager
    private let log: Logger
    private let work = ChildTasks()
    /// The armed fade timer, cancelled when the core re-arms it.
    private var fadeTimer: TimerID?

    init(bus: EventBus, store: Store, overlays: OverlayManager, log: Logger) {
        self.bus = bus
        self.store = store
        self.overlays = overlays
        self.log = log
    }

    /// Runs the manager's background work (the store's writes and reads) until cancelled.
    func run() async {
        await work.run()
    }

    /// The tenant decides whether buttons are shown at all.
    func setTenant(_ tenant: String?) { handle(.tenant(tenant)) }

    /// A predict or lucky overlay arrived in `room`: tracked (`received`) now and, unless it is
    /// kept off screen like any overlay (not targeted, answered, of a room left meanwhile),
    /// shown as a button and as a dialog when the viewer opens it.
    func offer(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) {
        guard overlays.admit(overlay, receivedAt: receivedAt, room: room, onScreen: nil) else { return }
        handle(.offer(overlay, room: room))
    }

    /// `action-button-predict`: the button's images and visibility.
    func buttonData(_ payload: JSONValue) {
        guard let data = PredictInput.ButtonData(payload) else {
            log.warning("Ignoring action-button-predict without timelineId")
            return
        }
        handle(.buttonData(data))
    }

    /// `predict-result`: posted as UPDATE_COUTER into an open dialog; its store write is left to `run()`.
    func result(_ payload: JSONValue) {
        guard let timelineId = payload["timelineId"]?.idString else { return }
        let counts: JSONValue = ["answer1": payload["answer1"] ?? .null, "answer2": payload["answer2"] ?? .null]
        handle(.result(timelineId: timelineId, counts: counts))
    }

    /// `predict.open`: shows the timeline's dialog and posts its result, if one is known.
    func open(timelineId: String) async throws(RPCError) -> JSONValue {
        guard let (overlay, room) = core.dialog(timelineId) else {
            throw RPCError.invalidParams("no predict or lucky timeline \(timelineId) in this room")
        }
        guard let overlayId = overlays.showDialog(overlay, room: room) else {
            throw RPCError.daemon(.noRoom, "no room is joined")
        }
        if let known = core.results[timelineId] {
            overlays.post(overlayId, key: "UPDATE_COUTER", data: known)
        } else if let cached = try? await store.predictResult(timeline: timelineId) {
            // A result of an earlier run: read on the player's request, after the dialog is shown.
            overlays.post(overlayId, key: "UPDATE_COUTER", data: cached)
        }
        handle(.opened(timelineId: timelineId))
        return PredictOpenResult(overlayId: overlayId, timelineId: timelineId, kind: overlay.kind.rawValue).json
    }

    /// `recall-overlay` of a predict/lucky timeline: its button goes away.
    func recall(timelineId: String) { handle(.recall(timelineId: timelineId)) }

    /// Leaving the room: every button is hidden and unopened timelines stop being tracked.
    func removeAll() { handle(.removeAll) }

    private func saved(_ timelineId: String, failed: Bool) { handle(.resultSaved(timelineId: timelineId, failed: failed)) }

    /// Feeds one input to the core and performs its effects, in order.
    private func handle(_ input: PredictInput) {
        for effect in core.handle(input, now: .now) { perform(effect) }
    }

    private func perform(_ effect: PredictEffect) {
        switch effect {
        case .publish(let button):
            bus.publish(button.event)
        case .status(let buttons):
            bus.setStatus("predict", .array(buttons.map(\.json)))
        case .cancelTracking(let overlay, let room, let reason):
            overlays.cancelTracking(overlay, room: room, reason: reason)
        case .recallDialogs(let timelineId):
            overlays.recall(timelineId: timelineId)
        case .post(let timelineId, let key, let data):
            overlays.post(timelineId: timelineId, key: key, data: data)
        case .saveResult(let timelineId, let counts):
            save(timelineId, counts)
        case .resultNotSaved(let timelineId):
            log.warning("Not caching a predict result: too many results wait for the store", ["INTERACTIVE_TIMELINE_ID": timelineId])
        case .armTimer(let deadline):
            arm(deadline)
        }
    }

    private func save(_ timelineId: String, _ counts: JSONValue) {
        let store = self.store
        let log = self.log
        work.start { [weak self] in
            var failed = false
            do {
                try await store.savePredictResult(timeline: timelineId, counts)
            } catch {
                failed = true
                log.error("Cannot cache the predict result: \(error)", ["INTERACTIVE_TIMELINE_ID": timelineId])
            }
            self?.saved(timelineId, failed: failed)
        }
    }

    private func arm(_ deadline: ContinuousClock.Instant?) {
        if let fadeTimer { EventLoop.shared.cancel(fadeTimer) }
        fadeTimer = deadline.map { EventLoop.shared.schedule(at: $0) { [weak self] in self?.handle(.timerFired) } }
    }
}
