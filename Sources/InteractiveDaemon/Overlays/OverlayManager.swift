import IPCProtocol
import JSONValue

/// Owns what is on screen: decides which overlays are shown (BACKEND.md, Which overlays are
/// shown), replaces, recalls, expires and hides them, takes the players' reports and the web
/// bridge, and runs the answer flow (OverlayManager+Answer.swift).
actor OverlayManager {
    /// Hide reasons (IPC.md, overlay.hide).
    enum HideReason: String, Sendable {
        case replaced = "replaced_by_new_overlay"
        case recalled
        case removeAll = "remove_all_view"
        case interactiveHide = "interactive_hide"
        case dismissed
        case expired
        case playerDisconnected = "player_disconnected"
    }

    let bus: EventBus
    let store: Store
    let log: Logger
    var tracker: (any OverlayTracker)?
    private(set) var context: RoomContext?
    /// On screen, in the order shown.
    var screen: [OnScreenOverlay] = []
    /// Timelines the viewer answered for this media (store + the backend's interactive status).
    var answered: Set<String> = []
    /// Timelines with an answer in flight.
    var answering: Set<String> = []
    /// Bet confirmations asked of the viewer (`answer.confirm`), by overlay id.
    var confirmations = BetConfirmations<CheckedContinuation<BetDecision, Never>>()
    /// When each overlay on screen expires (its duration and 5 s).
    private var expiries = DeadlineSchedule<String>()
    private var nextOverlayNumber = 1
    private let idPrefix = DeviceIdentity.randomHex(bytes: 3)

    init(bus: EventBus, store: Store, log: Logger) {
        self.bus = bus
        self.store = store
        self.log = log
    }

    /// Tracking for live overlays; nil turns it off.
    func setTracker(_ tracker: (any OverlayTracker)?) { self.tracker = tracker }

    /// The room the overlays belong to. A new media or viewer reloads the answered timelines.
    func setContext(_ context: RoomContext?) async {
        let previous = self.context
        self.context = context
        guard let context else {
            answered = []
            return
        }
        if previous?.mediaId != context.mediaId || previous?.session.answeredBucket != context.session.answeredBucket {
            do {
                answered = try await store.answeredTimelines(viewer: context.session.answeredBucket, media: context.mediaId)
            } catch {
                log.error("Cannot read answered timelines from the store: \(error)", ["INTERACTIVE_MEDIA_ID": context.mediaId])
                answered = []
            }
        }
    }

    /// Adds timelines the backend says the viewer answered (interactive status at join).
    func addAnswered(_ timelines: [String]) { answered.formUnion(timelines) }

    // MARK: Showing

    /// An overlay from the backend (or the VOD clock) that arrived in `room`: shown, or kept off
    /// screen with a reason. In live mode its tracking session starts here (`received`). Returns
    /// the overlay id when shown.
    @discardableResult
    func offer(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey) async -> String? {
        await tracker?.keepUp()
        guard admit(overlay, receivedAt: receivedAt, room: room, onScreen: Set(screen.map(\.timelineId))) else { return nil }
        return await show(overlay, room: room)
    }

    /// Starts the tracking session of an overlay that arrived in `room` (live mode: stage
    /// `received`) and decides whether it may be shown (`OverlayAdmission`); when not, the
    /// session is closed with the reason. `onScreen` as `OverlayAdmission` takes it.
    func admit(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey, onScreen: Set<String>?) -> Bool {
        let trackingId = trackingId(of: overlay, in: room)
        if let trackingId {
            tracker?.record(.received(trackingId: trackingId, timelineId: overlay.timelineId, overlayType: overlay.kind.rawValue,
                                      emitTimestamp: overlay.emitTimestamp, durationSec: overlay.durationSec,
                                      receivedAt: receivedAt))
        }
        guard let reason = OverlayAdmission.refusal(overlay, arrivedIn: room, current: context?.key, os: context?.settings.os,
                                                    answered: answered, onScreen: onScreen) else { return true }
        log.info("Overlay kept off screen (\(overlay.timelineId), media \(room.mediaId)): \(reason)",
                 fields(overlay).merging(["INTERACTIVE_MEDIA_ID": room.mediaId]) { $1 })
        // A repeated emit of an overlay on screen (same tracking id) is that overlay's own
        // session, not a new one: it must not be cancelled.
        if let trackingId, !screen.contains(where: { $0.trackingId == trackingId }) {
            tracker?.record(.keptOffScreen(trackingId: trackingId, reason: reason))
        }
        return false
    }

    /// Shows a predict or lucky dialog the viewer opened (its render tracking starts now).
    /// Returns the dialog's overlay id, or the one already on screen for the timeline.
    func showDialog(_ overlay: IncomingOverlay, room: RoomKey) async -> String? {
        if let open = screen.first(where: { $0.timelineId == overlay.timelineId }) { return open.overlayId }
        return await show(overlay, room: room)
    }

    /// Ends the tracking session of an overlay that arrived in `room` and will not be shown (a
    /// predict never opened).
    func cancelTracking(_ overlay: IncomingOverlay, room: RoomKey, reason: HideReason) {
        guard let trackingId = trackingId(of: overlay, in: room) else { return }
        tracker?.record(.cancelled(trackingId: trackingId, reason: reason.rawValue))
    }

    private func show(_ overlay: IncomingOverlay, room: RoomKey) async -> String? {
        guard let context, context.key == room,
              let url = overlay.templateURL(loggedIn: context.session.isLoggedIn, tenant: context.settings.tenant,
                                            fanclub: context.fanclub) else { return nil }
        let slot = overlay.kind == .minigame ? "minigame" : "dialog"
        // The players learn of the replacement first; logs and tracking of the replaced overlay
        // follow the new one's overlay.show, off the display path.
        var replaced: [OnScreenOverlay] = []
        for old in screen where old.slot == slot {
            if let record = await takeOff(old.overlayId, reason: .replaced) { replaced.append(record) }
        }
        // The room may have been left while the replaced overlays were taken off.
        guard self.context?.key == room else {
            for old in replaced { hidden(old, reason: .replaced) }
            if let trackingId = trackingId(of: overlay, in: room) {
                tracker?.record(.keptOffScreen(trackingId: trackingId, reason: HideReason.removeAll.rawValue))
            }
            return nil
        }
        let overlayId = "ov-\(idPrefix)-\(nextOverlayNumber)"
        nextOverlayNumber += 1
        let record = OnScreenOverlay(overlayId: overlayId, overlay: overlay, url: url, shownAt: Timestamp.nowMs(),
                                     trackingId: trackingId(of: overlay, in: room))
        screen.append(record)
        await bus.publish(record.showEvent, section: "overlays", status: screenStatus)
        for old in replaced { hidden(old, reason: .replaced) }
        log.info("Overlay \(overlayId) shown (\(logDetail(overlay)))", fields(overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId]) { $1 }, id: .overlayShown)
        if let trackingId = record.trackingId { tracker?.record(.shown(trackingId: trackingId)) }
        if overlay.durationSec > 0,
           let target = expiries.set(overlayId, at: .now + .seconds(overlay.durationSec + 5)) {
            armExpiryTimer(at: target)
        }
        return overlayId
    }

    private func armExpiryTimer(at target: ContinuousClock.Instant) {
        expiries.armed(Task { [weak self] in
            try? await Task.sleep(until: target, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.expiryTimerFired()
        }, at: target)
    }

    private func expiryTimerFired() async {
        let (due, next) = expiries.takeDue(now: .now)
        if let next { armExpiryTimer(at: next) }
        for overlayId in due { await hide(overlayId, reason: .expired) }
    }

    // MARK: Hiding

    /// Hides one overlay; a revealed one gives the player its controls back.
    func hide(_ overlayId: String, reason: HideReason) async {
        guard let record = await takeOff(overlayId, reason: reason) else { return }
        hidden(record, reason: reason)
    }

    /// Removes an overlay from the screen and tells the players (`overlay.hide`, and the
    /// controls back when it had hidden them).
    private func takeOff(_ overlayId: String, reason: HideReason) async -> OnScreenOverlay? {
        guard let index = screen.firstIndex(where: { $0.overlayId == overlayId }) else { return nil }
        let record = screen.remove(at: index)
        expiries.remove(overlayId)
        if case .resume(let waiter) = confirmations.overlayGone(overlayId) { waiter.resume(returning: .overlayGone) }
        await bus.publish(OverlayHideEvent(overlayId: overlayId, timelineId: record.timelineId, reason: reason.rawValue),
                          section: "overlays", status: screenStatus)
        // The controls come back when the last revealed overlay leaves.
        if record.revealed && !controlsHidden { await bus.publish(PlayerControlsEvent(visible: true)) }
        return record
    }

    /// After a hide: the log line and the end of the overlay's tracking session.
    private func hidden(_ record: OnScreenOverlay, reason: HideReason) {
        log.info("Overlay \(record.overlayId) hidden (\(logDetail(record.overlay))): \(reason.rawValue)", fields(record.overlay).merging(["INTERACTIVE_OVERLAY_ID": record.overlayId]) { $1 })
        if let trackingId = record.trackingId { tracker?.record(.cancelled(trackingId: trackingId, reason: reason.rawValue)) }
    }

    /// `recall-overlay`: the backend takes a timeline back.
    func recall(timelineId: String) async {
        for record in screen where record.timelineId == timelineId { await hide(record.overlayId, reason: .recalled) }
    }

    /// Hides everything (leaving or changing rooms). The room's context ends with it, so that an
    /// overlay of this room still on its way is not shown in the next one.
    func removeAll() async {
        context = nil
        answered = []
        for record in screen { await hide(record.overlayId, reason: .removeAll) }
    }

    /// A player connection went away: overlays it owned are hidden.
    func clientDisconnected(_ connection: Int) async {
        for record in screen where record.owner == connection { await hide(record.overlayId, reason: .playerDisconnected) }
    }

    /// Posts a message into every overlay of a timeline (`overlay.post`).
    /// Posts the backend's `data` into the timeline's overlays; data over `OnScreenOverlay.rawLimit`
    /// bytes is not forwarded (a warning says so), so every event and the replay ring stay small.
    func post(timelineId: String, key: String, data: JSONValue) async {
        let size = data.serialized().count
        guard size <= OnScreenOverlay.rawLimit else {
            log.warning("Not posting \(key) for timeline \(timelineId): its data takes \(size) bytes (at most \(OnScreenOverlay.rawLimit))",
                        ["INTERACTIVE_TIMELINE_ID": timelineId])
            return
        }
        for record in screen where record.timelineId == timelineId { await post(record.overlayId, key: key, data: data) }
    }

    func post(_ overlayId: String, key: String, data: JSONValue) async {
        await bus.publish(OverlayPostEvent(overlayId: overlayId, key: key, data: data))
    }

    // MARK: Player reports

    /// `overlay.attached`: the player attached the web view and started loading. A connection
    /// that reports with `claim: false` (interactivectl) never becomes the owner.
    func attached(_ overlayId: String, connection: Int?) async throws(RPCError) {
        let index = try indexOf(overlayId)
        if let connection { screen[index].owner = connection }
        if let trackingId = screen[index].trackingId { tracker?.record(.attached(trackingId: trackingId, at: Timestamp.nowMs())) }
    }

    /// `overlay.rendered`: the first report wins.
    func rendered(_ overlayId: String, loaded: Bool, reason: String?, connection: Int?) async throws(RPCError) -> Bool {
        let index = try indexOf(overlayId)
        claimOwner(index, connection)
        guard !screen[index].renderReported else { return false }
        screen[index].renderReported = true
        guard let trackingId = screen[index].trackingId else { return true }
        if loaded {
            tracker?.record(.loaded(trackingId: trackingId, at: Timestamp.nowMs()))
        } else {
            log.warning("Overlay \(overlayId) failed to load (\(logDetail(screen[index].overlay))): \(reason ?? "no reason given")",
                        fields(screen[index].overlay).merging(["INTERACTIVE_OVERLAY_ID": overlayId]) { $1 })
            tracker?.record(.failed(trackingId: trackingId, reason: reason, at: Timestamp.nowMs()))
        }
        return true
    }

    /// `overlay.dismiss`: the viewer closed it.
    func dismiss(_ overlayId: String) async throws(RPCError) {
        _ = try indexOf(overlayId)
        await hide(overlayId, reason: .dismissed)
    }

    /// `overlay.bridge`: what the template posted.
    func bridge(_ overlayId: String, message: BridgeMessage, connection: Int?) async throws(RPCError) -> JSONValue {
        let index = try indexOf(overlayId)
        claimOwner(index, connection)
        switch message.kind {
        case .show?, .open?:
            if !screen[index].revealed {
                let controlsWereHidden = controlsHidden
                screen[index].revealed = true
                await bus.publish(OverlayRevealEvent(overlayId: overlayId), section: "overlays", status: screenStatus)
                if !controlsWereHidden { await bus.publish(PlayerControlsEvent(visible: false)) }
            }
        case .hide?, .close?:
            await hide(overlayId, reason: .interactiveHide)
        case .actionReport?:
            if let url = message.adURL {
                await bus.publish(OverlayLinkEvent(overlayId: overlayId, url: url))
                return BridgeResult(handled: true, action: "link").json
            }
            startAnswer(overlayId: overlayId, answer: message.data)
            return BridgeResult(handled: true, action: "answer").json
        case .ping?:
            break
        case nil:
            log.debug("Unknown bridge message type \(message.type)", ["INTERACTIVE_OVERLAY_ID": overlayId])
            return BridgeResult(handled: false).json
        }
        return BridgeResult(handled: true).json
    }

    func indexOf(_ overlayId: String) throws(RPCError) -> Int {
        guard let index = screen.firstIndex(where: { $0.overlayId == overlayId }) else {
            throw RPCError.daemon(.unknownOverlay, "no overlay \(overlayId) is on screen")
        }
        return index
    }

    /// The first connection that reports on an overlay owns it, unless one attached it.
    private func claimOwner(_ index: Int, _ connection: Int?) {
        if screen[index].owner == nil, let connection { screen[index].owner = connection }
    }

    /// The tracking id of an overlay that arrived in `room`: live mode only (VOD has no tracking).
    func trackingId(of overlay: IncomingOverlay, in room: RoomKey) -> String? {
        room.mode == .live ? overlay.trackingId : nil
    }

    var screenStatus: JSONValue { .array(screen.map(\.status)) }

    /// The player's controls are hidden while any overlay on screen is revealed.
    var controlsHidden: Bool { screen.contains(where: \.revealed) }

    /// What log messages say about an overlay after its id: "quiz-1-2, media m1" (its timeline
    /// and the room's media), as in "Overlay ov-1a2b3c-4 shown (quiz-1-2, media m1)".
    func logDetail(_ overlay: IncomingOverlay) -> String {
        context.map { "\(overlay.timelineId), media \($0.mediaId)" } ?? overlay.timelineId
    }

    func fields(_ overlay: IncomingOverlay) -> [String: String] {
        var fields = ["INTERACTIVE_TIMELINE_ID": overlay.timelineId]
        if let trackingId = overlay.trackingId { fields["INTERACTIVE_TRACKING_ID"] = trackingId }
        if let mediaId = context?.mediaId { fields["INTERACTIVE_MEDIA_ID"] = mediaId }
        return fields
    }
}
