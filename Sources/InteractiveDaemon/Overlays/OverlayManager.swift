import IPCProtocol
import JSONValue
import Runtime

/// Owns what is on screen: a thin shell around `ScreenCore` (which overlays are shown, replaced,
/// recalled, expired and hidden, the players' reports and the web bridge) that performs what it
/// decides, in order and at once (events, the expiry timer, tracking and logs); and the answer
/// flow, decided by `AnswerCore` (OverlayManager+Answer.swift). `run()` owns its background work
/// (the answer flows' REST calls, the store reads).
@LoopActor
final class OverlayManager {

    let bus: EventBus
    let store: Store
    let log: Logger
    var tracker: (any OverlayTracker)?
    var core = ScreenCore(idPrefix: DeviceIdentity.randomHex(bytes: 3))
    /// The answer flow's decisions (AnswerCore.swift).
    var answers = AnswerCore()
    /// The answer flows' REST calls and the store reads, run by `run()`.
    let work = ChildTasks()
    /// Told when the backend refuses the viewer's token (the answer flow's REST calls).
    private var sessionRefused: ((_ token: String, _ source: String) -> Void)?

    init(bus: EventBus, store: Store, log: Logger) {
        self.bus = bus
        self.store = store
        self.log = log
    }

    /// Runs the manager's background work until cancelled.
    func run() async {
        await work.run()
    }

    /// Tracking for live overlays; nil turns it off.
    func setTracker(_ tracker: (any OverlayTracker)?) { self.tracker = tracker }

    /// Who is told when a REST call of the answer flow gets 401 or 403 (the session's owner).
    func onSessionRefused(_ handler: @escaping (_ token: String, _ source: String) -> Void) {
        sessionRefused = handler
    }

    /// The backend refused `token` on a call of the answer flow.
    func reportSessionRefused(_ token: String?, source: String) {
        if let token { sessionRefused?(token, source) }
    }

    var context: RoomContext? { core.context }
    var screen: [OnScreenOverlay] { core.screen }
    var answered: Set<String> { core.answered }

    /// The room the overlays belong to. A new media or viewer reloads the answered timelines.
    func setContext(_ context: RoomContext?) {
        var effects: [ScreenEffect] = []
        core.setContext(context, nowMs: Timestamp.nowMs(), now: .now, into: &effects)
        perform(effects)
    }

    private func answeredLoaded(_ timelines: Set<String>?, viewer: String, mediaId: String) {
        var effects: [ScreenEffect] = []
        core.answeredLoaded(timelines, viewer: viewer, mediaId: mediaId, nowMs: Timestamp.nowMs(), now: .now, into: &effects)
        perform(effects)
    }

    /// Adds timelines the backend says `viewer` answered in `mediaId` (interactive status at
    /// join); ignored when the screen serves another room or viewer since.
    func addAnswered(_ timelines: [String], viewer: String, mediaId: String) {
        core.addAnswered(timelines, viewer: viewer, mediaId: mediaId)
    }

    // MARK: Showing

    /// An overlay from the backend (or the VOD clock) that arrived in `room`: shown, or kept off
    /// screen with a reason. In live mode its tracking session starts here (`received`). Returns
    /// the overlay id when shown.
    @discardableResult
    func offer(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) -> String? {
        var effects: [ScreenEffect] = []
        let overlayId = core.offer(overlay, receivedAt: receivedAt, room: room, nowMs: Timestamp.nowMs(), now: .now, into: &effects)
        perform(effects)
        return overlayId
    }

    /// Starts the tracking session of an overlay that arrived in `room` and decides whether it
    /// may be shown (`ScreenCore.admit`).
    func admit(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey, onScreen: [String]?) -> Bool {
        var effects: [ScreenEffect] = []
        let admitted = core.admit(overlay, receivedAt: receivedAt, room: room, onScreen: onScreen, into: &effects)
        perform(effects)
        return admitted
    }

    /// Shows a predict or lucky dialog the viewer opened (its render tracking starts now).
    /// Returns the dialog's overlay id, or the one already on screen for the timeline.
    func showDialog(_ overlay: IncomingOverlay, room: RoomKey) -> String? {
        var effects: [ScreenEffect] = []
        let overlayId = core.showDialog(overlay, room: room, nowMs: Timestamp.nowMs(), now: .now, into: &effects)
        perform(effects)
        return overlayId
    }

    /// Ends the tracking session of an overlay that arrived in `room` and will not be shown (a
    /// predict never opened).
    func cancelTracking(_ overlay: IncomingOverlay, room: RoomKey, reason: HideReason) {
        var effects: [ScreenEffect] = []
        core.cancelTracking(overlay, room: room, reason: reason, into: &effects)
        perform(effects)
    }

    // MARK: Hiding

    /// Hides one overlay; a revealed one gives the player its controls back.
    func hide(_ overlayId: String, reason: HideReason) {
        var effects: [ScreenEffect] = []
        core.hide(overlayId, reason: reason, into: &effects)
        perform(effects)
    }

    /// `recall-overlay`: the backend takes a timeline back.
    func recall(timelineId: String) {
        var effects: [ScreenEffect] = []
        core.recall(timelineId: timelineId, into: &effects)
        perform(effects)
    }

    /// Hides everything (leaving or changing rooms). The room's context ends with it, so that an
    /// overlay of this room still on its way is not shown in the next one.
    func removeAll() {
        var effects: [ScreenEffect] = []
        core.removeAll(into: &effects)
        perform(effects)
    }

    /// A player connection went away: overlays it owned are hidden.
    func clientDisconnected(_ connection: Int) {
        var effects: [ScreenEffect] = []
        core.clientDisconnected(connection, into: &effects)
        perform(effects)
    }

    /// Posts the backend's `data` into the timeline's overlays (`overlay.post`); data over
    /// `OnScreenOverlay.rawLimit` bytes is not forwarded (a warning says so).
    func post(timelineId: String, key: String, data: JSONValue) {
        var effects: [ScreenEffect] = []
        core.post(timelineId: timelineId, key: key, data: data, into: &effects)
        perform(effects)
    }

    /// Posts a message into one overlay.
    func post(_ overlayId: String, key: String, data: JSONValue) {
        perform([.post(overlayId: overlayId, key: key, data: data)])
    }

    // MARK: Player reports

    /// `overlay.attached`: the player attached the web view and started loading. A connection
    /// that reports with `claim: false` (interactivectl) never becomes the owner.
    func attached(_ overlayId: String, connection: Int?) throws(RPCError) {
        var effects: [ScreenEffect] = []
        try core.attached(overlayId, connection: connection, nowMs: Timestamp.nowMs(), into: &effects)
        perform(effects)
    }

    /// `overlay.rendered`: the first report wins.
    func rendered(_ overlayId: String, loaded: Bool, reason: String?, connection: Int?) throws(RPCError) -> Bool {
        var effects: [ScreenEffect] = []
        let first = try core.rendered(overlayId, loaded: loaded, reason: reason, connection: connection, nowMs: Timestamp.nowMs(),
                                      into: &effects)
        perform(effects)
        return first
    }

    /// `overlay.dismiss`: the viewer closed it.
    func dismiss(_ overlayId: String) throws(RPCError) {
        var effects: [ScreenEffect] = []
        try core.dismiss(overlayId, into: &effects)
        perform(effects)
    }

    /// `overlay.bridge`: what the template posted.
    func bridge(_ overlayId: String, message: BridgeMessage, connection: Int?) throws(RPCError) -> JSONValue {
        var effects: [ScreenEffect] = []
        let result = try core.bridge(overlayId, message: message, connection: connection, into: &effects)
        perform(effects)
        return result
    }

    private func expiryTimerFired(_ generation: Int) {
        var effects: [ScreenEffect] = []
        core.timerFired(generation, now: .now, into: &effects)
        perform(effects)
    }

    // MARK: Effects

    /// Performs one decision's effects: first, in the order decided, everything but the
    /// bookkeeping (the players' events, the expiry timer, the answer flow), so the players' events
    /// are written before anything else is done; then the tracking records and log lines, which
    /// name the room the decision was made in.
    func perform(_ effects: [ScreenEffect]) {
        let mediaId = context?.mediaId
        // What the players are told goes to each of them in one write.
        bus.batch {
            for effect in effects where !effect.isBookkeeping { perform(effect, mediaId: mediaId) }
        }
        for effect in effects where effect.isBookkeeping { perform(effect, mediaId: mediaId) }
    }

    /// `mediaId`: the room's media when the effect was decided, for log lines.
    private func perform(_ effect: ScreenEffect, mediaId: String?) {
        switch effect {
        // The board's `overlays` section is built when it is read, not with every change.
        case .show(let record, let screen):
            bus.publish(record.showEvent, section: "overlays", builtStatus: { OnScreenOverlay.status(of: screen) })
        case .hide(let record, let reason, let screen):
            bus.publish(OverlayHideEvent(overlayId: record.overlayId, timelineId: record.timelineId, reason: reason.rawValue),
                        section: "overlays", builtStatus: { OnScreenOverlay.status(of: screen) })
        case .reveal(let overlayId, let screen):
            bus.publish(OverlayRevealEvent(overlayId: overlayId), section: "overlays", builtStatus: { OnScreenOverlay.status(of: screen) })
        case .controls(let visible):
            bus.publish(PlayerControlsEvent(visible: visible))
        case .post(let overlayId, let key, let data):
            bus.publish(OverlayPostEvent(overlayId: overlayId, key: key, data: data))
        case .link(let overlayId, let url, let loadable):
            bus.publish(OverlayLinkEvent(overlayId: overlayId, url: url, loadable: loadable))
        case .track(let event):
            tracker?.record(event)
        case .overlayGone(let overlayId):
            answerOverlayGone(overlayId)
        case .startAnswer(let overlayId, let answer):
            // After the bridge call that reported it is answered.
            work.start { [weak self] in self?.startAnswer(overlayId: overlayId, answer: answer) }
        case .loadAnswered(let viewer, let mediaId):
            let store = self.store
            let log = self.log
            work.start { [weak self] in
                let timelines: Set<String>?
                do {
                    timelines = try await store.answeredTimelines(viewer: viewer, media: mediaId)
                } catch {
                    log.error("Cannot read answered timelines from the store: \(error)", ["INTERACTIVE_MEDIA_ID": mediaId])
                    timelines = nil
                }
                self?.answeredLoaded(timelines, viewer: viewer, mediaId: mediaId)
            }
        case .armTimer(let target):
            let generation = core.timerArmed(at: target)
            EventLoop.shared.schedule(at: target) { [weak self] in self?.expiryTimerFired(generation) }
        case .keptOffScreen(let overlay, let room, let reason):
            log.info("Overlay kept off screen (\(overlay.timelineId), media \(room.mediaId)): \(reason)",
                     fields(overlay, mediaId: room.mediaId))
        case .shown(let record, let replacing):
            let replaced = replacing.isEmpty ? "" : ", replacing \(replacing.joined(separator: ", "))"
            log.info("Overlay \(record.overlayId) shown (\(logDetail(record.overlay, mediaId: mediaId)))\(replaced)",
                     fields(record, mediaId: mediaId), id: .overlayShown)
        case .reshown(let old, let new):
            log.info("Overlay \(old.overlayId) shown again as \(new.overlayId) for the new viewer or fanclub membership "
                     + "(\(logDetail(new.overlay, mediaId: mediaId)))", fields(new, mediaId: mediaId))
        case .hidden(let record, let reason):
            log.info("Overlay \(record.overlayId) hidden (\(logDetail(record.overlay, mediaId: mediaId))): \(reason.rawValue)",
                     fields(record, mediaId: mediaId))
        case .loadFailed(let record, let reason):
            log.warning("Overlay \(record.overlayId) failed to load (\(logDetail(record.overlay, mediaId: mediaId))): "
                        + (reason ?? "no reason given"), fields(record, mediaId: mediaId))
        case .postTooLarge(let timelineId, let key, let bytes):
            log.warning("Not posting \(key) for timeline \(timelineId): its data takes \(bytes) bytes (at most \(OnScreenOverlay.rawLimit))",
                        ["INTERACTIVE_TIMELINE_ID": timelineId])
        case .unknownBridgeMessage(let overlayId, let type):
            log.debug("Unknown bridge message type \(type)", ["INTERACTIVE_OVERLAY_ID": overlayId])
        case .adClickDropped(let overlayId, let reason):
            log.info("Ad click of \(overlayId) dropped: \(reason), no link a player could use", ["INTERACTIVE_OVERLAY_ID": overlayId])
        }
    }

    // MARK: Logging

    /// What log messages say about an overlay after its id: "quiz-1-2, media m1" (its timeline
    /// and the room's media), as in "Overlay ov-1a2b3c-4 shown (quiz-1-2, media m1)".
    func logDetail(_ overlay: IncomingOverlay) -> String { logDetail(overlay, mediaId: context?.mediaId) }

    private func logDetail(_ overlay: IncomingOverlay, mediaId: String?) -> String {
        mediaId.map { "\(overlay.timelineId), media \($0)" } ?? overlay.timelineId
    }

    /// The journal fields of an overlay of the current room.
    func fields(_ overlay: IncomingOverlay) -> LogFields { fields(overlay, mediaId: context?.mediaId) }

    private func fields(_ overlay: IncomingOverlay, mediaId: String?, overlayId: String? = nil) -> LogFields {
        var fields = LogFields()
        fields["INTERACTIVE_TIMELINE_ID"] = overlay.timelineId
        if let trackingId = overlay.trackingId { fields["INTERACTIVE_TRACKING_ID"] = trackingId }
        if let mediaId { fields["INTERACTIVE_MEDIA_ID"] = mediaId }
        if let overlayId { fields["INTERACTIVE_OVERLAY_ID"] = overlayId }
        return fields
    }

    private func fields(_ record: OnScreenOverlay, mediaId: String?) -> LogFields {
        fields(record.overlay, mediaId: mediaId, overlayId: record.overlayId)
    }
}
