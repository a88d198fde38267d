import IPCProtocol
import JSONValue

/// Why an overlay left the screen (IPC.md, overlay.hide).
enum HideReason: String, Sendable {
    case replaced = "replaced_by_new_overlay"
    case recalled
    case removeAll = "remove_all_view"
    case interactiveHide = "interactive_hide"
    case dismissed
    case expired
    case playerDisconnected = "player_disconnected"
    /// A login, logout or fanclub change: the same timeline is shown again at once with its new
    /// URL (`ScreenCore.setContext`); its tracking session goes on.
    case sessionChanged = "session_changed"
}

/// What the screen decision core asks its shell to do, in order.
///
/// Indirect: each effect is one boxed value, so the shell's passes over the list copy a reference,
/// not the overlays and screens the cases carry.
indirect enum ScreenEffect: Sendable, Equatable {
    /// Publish `overlay.show`; `status` is the screen now (the board's `overlays` section).
    case show(OnScreenOverlay, status: [OnScreenOverlay])
    /// Publish `overlay.hide`.
    case hide(OnScreenOverlay, reason: HideReason, status: [OnScreenOverlay])
    /// Publish `overlay.reveal`: the template revealed itself (its controls hide).
    case reveal(overlayId: String, status: [OnScreenOverlay])
    /// Publish `player.controls`.
    case controls(visible: Bool)
    /// Publish `overlay.post` into one overlay.
    case post(overlayId: String, key: String, data: JSONValue)
    /// Publish `overlay.link`: an ad click to open (`loadable`) or to show.
    case link(overlayId: String, url: String, loadable: Bool)
    /// Record a tracking event (live overlays only).
    case track(TrackingEvent)
    /// A bet confirmation asked for this overlay ends (`AnswerCore.overlayGone`).
    case overlayGone(overlayId: String)
    /// Start the answer flow for what the template reported.
    case startAnswer(overlayId: String, answer: JSONValue)
    /// Read the viewer's answered timelines of this media from the store, off the display path,
    /// and feed them back (`answeredLoaded`).
    case loadAnswered(viewer: String, mediaId: String)
    /// Arm the one expiry timer for this instant (a timer armed for a later one is replaced).
    case armTimer(at: ContinuousClock.Instant)
    // What the shell logs.
    case keptOffScreen(IncomingOverlay, room: RoomKey, reason: String)
    /// An overlay shown; `replacing`: the overlays it took the place of, whose one line this is
    /// (one line per decision: a replacement is not also logged as a hide).
    case shown(OnScreenOverlay, replacing: [String])
    case hidden(OnScreenOverlay, reason: HideReason)
    /// An overlay shown again for a new viewer or fanclub membership (`old` hidden, `new` shown).
    case reshown(old: OnScreenOverlay, new: OnScreenOverlay)
    case loadFailed(OnScreenOverlay, reason: String?)
    case postTooLarge(timelineId: String, key: String, bytes: Int)
    case unknownBridgeMessage(overlayId: String, type: String)
    case adClickDropped(overlayId: String, reason: String)

    /// An event the players receive.
    var reachesPlayers: Bool {
        switch self {
        case .show, .hide, .reveal, .controls, .post, .link: return true
        case .track, .overlayGone, .startAnswer, .loadAnswered, .armTimer, .keptOffScreen, .shown, .hidden, .reshown, .loadFailed,
             .postTooLarge, .unknownBridgeMessage, .adClickDropped: return false
        }
    }

    /// A tracking record or a log line: changes nothing the screen, the timers or the answer flow
    /// depend on, so it may wait until the players' events are written.
    var isBookkeeping: Bool {
        switch self {
        case .track, .keptOffScreen, .shown, .hidden, .reshown, .loadFailed, .postTooLarge, .unknownBridgeMessage, .adClickDropped:
            return true
        case .show, .hide, .reveal, .controls, .post, .link, .overlayGone, .startAnswer, .loadAnswered, .armTimer: return false
        }
    }
}

/// What is on screen as a pure state machine (BACKEND.md, Which overlays are shown): which
/// overlays are shown and kept off screen, one minigame and one predict/lucky dialog at a time
/// (a new one replaces the old), recalls, expiries (duration + 5 s), the players' reports and the
/// web bridge, and the player's controls (hidden while any overlay on screen is revealed).
/// Each call takes the times it needs (`nowMs`, the wall clock of timestamps; `now`, the
/// monotonic clock of expiries) and appends effects for the shell (`OverlayManager`) to perform.
struct ScreenCore: Sendable {
    /// How long after its `duration` an overlay expires.
    static let expiryGrace: Duration = .seconds(5)
    /// At most this many minigames wait for the answered timelines; one more stops the wait.
    static let maxHeldOffers = 256

    /// A minigame that waits for the answered timelines to be read.
    private struct HeldOffer: Sendable {
        let overlay: IncomingOverlay
        let receivedAt: Int64
        let room: RoomKey
    }

    private(set) var context: RoomContext?
    /// On screen, in the order shown.
    private(set) var screen: [OnScreenOverlay] = []
    /// Timelines the viewer answered for this media (store + the backend's interactive status).
    private(set) var answered: Set<String> = []
    /// The answered timelines being read (viewer bucket and media): minigames wait meanwhile, so
    /// that one answered before (even before a restart) is not shown again.
    private(set) var answeredPending: (viewer: String, mediaId: String)?
    private var heldOffers: [HeldOffer] = []
    private var expiries = DeadlineSchedule<String>()
    private var nextOverlayNumber = 1
    private let idPrefix: String

    init(idPrefix: String) {
        self.idPrefix = idPrefix
    }

    // MARK: Context and answered timelines

    /// The room the overlays belong to. A new media or viewer reloads the answered timelines; a
    /// new viewer (a login or logout) or fanclub membership shows every overlay on screen again
    /// with its new URL (`reshowForViewer`).
    mutating func setContext(_ context: RoomContext?, nowMs: Int64, now: ContinuousClock.Instant, into effects: inout [ScreenEffect]) {
        let previous = self.context
        self.context = context
        guard let context else {
            answered = []
            releaseHeldOffers(nowMs: nowMs, now: now, into: &effects)
            return
        }
        if let previous, previous.key == context.key {
            let newViewer = previous.session.token != context.session.token || previous.session.userId != context.session.userId
            reshowForViewer(everything: newViewer, nowMs: nowMs, into: &effects)
        }
        if previous?.mediaId != context.mediaId || previous?.session.answeredBucket != context.session.answeredBucket {
            answered = []
            answeredPending = (context.session.answeredBucket, context.mediaId)
            effects.append(.loadAnswered(viewer: context.session.answeredBucket, mediaId: context.mediaId))
        }
    }

    /// Templates follow the viewer (iOS reloaded every view on a new token): each overlay on
    /// screen whose URL changed (`logged`, `fanclub`), or every one when `everything` (another
    /// viewer), is hidden (`session_changed`) and shown again at once with its new URL and a new
    /// overlay id. Its tracking session goes on (no stage is sent for either), and it keeps the
    /// expiry it had.
    private mutating func reshowForViewer(everything: Bool, nowMs: Int64, into effects: inout [ScreenEffect]) {
        guard let context else { return }
        for old in screen {
            guard let url = old.overlay.templateURL(loggedIn: context.session.isLoggedIn, tenant: context.settings.tenant,
                                                    fanclub: context.fanclub),
                  everything || url != old.url else { continue }
            let deadline = expiries.deadline(of: old.overlayId)
            guard takeOff(old.overlayId, reason: .sessionChanged, into: &effects) != nil else { continue }
            let record = OnScreenOverlay(overlayId: nextOverlayId(), overlay: old.overlay, url: url, shownAt: nowMs,
                                         trackingId: old.trackingId)
            screen.append(record)
            effects.append(.show(record, status: screen))
            effects.append(.reshown(old: old, new: record))
            if let deadline, let target = expiries.set(record.overlayId, at: deadline) { effects.append(.armTimer(at: target)) }
        }
    }

    /// The answered timelines read for `viewer` and `mediaId` (nil: the read failed, none known).
    /// Taken only while the context is still that viewer's and media's; the minigames that
    /// waited for them are then offered, in order.
    mutating func answeredLoaded(_ timelines: Set<String>?, viewer: String, mediaId: String, nowMs: Int64,
                                 now: ContinuousClock.Instant, into effects: inout [ScreenEffect]) {
        guard let context, context.mediaId == mediaId, context.session.answeredBucket == viewer,
              let pending = answeredPending, pending == (viewer, mediaId) else { return }
        answered.formUnion(timelines ?? [])  // with what the interactive status may have added
        releaseHeldOffers(nowMs: nowMs, now: now, into: &effects)
    }

    private mutating func releaseHeldOffers(nowMs: Int64, now: ContinuousClock.Instant, into effects: inout [ScreenEffect]) {
        answeredPending = nil
        let held = heldOffers
        heldOffers = []
        for offer in held {
            _ = self.offer(offer.overlay, receivedAt: offer.receivedAt, room: offer.room, nowMs: nowMs, now: now, into: &effects)
        }
    }

    /// How many minigames wait for the answered timelines.
    var heldOfferCount: Int { heldOffers.count }

    /// Timelines the backend says `viewer` (an answers bucket) answered in `mediaId` (the
    /// interactive status at join). A late reply of another room or viewer is ignored: it never
    /// hides the current room's timelines.
    mutating func addAnswered(_ timelines: [String], viewer: String, mediaId: String) {
        guard let context, context.mediaId == mediaId, context.session.answeredBucket == viewer else { return }
        answered.formUnion(timelines)
    }

    /// A timeline answered now in `room` by `viewer` (an answers bucket); nothing when the screen
    /// serves another room or viewer since.
    mutating func markAnswered(_ timelineId: String, room: RoomKey, viewer: String) {
        guard let context, context.key == room, context.session.answeredBucket == viewer else { return }
        answered.insert(timelineId)
    }

    // MARK: Showing

    /// A minigame that arrived in `room`: shown, or kept off screen with a reason, or (while the
    /// answered timelines are read) held until they are. Returns the overlay id when shown now.
    mutating func offer(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey, nowMs: Int64, now: ContinuousClock.Instant,
                        into effects: inout [ScreenEffect]) -> String? {
        if answeredPending != nil {
            heldOffers.append(HeldOffer(overlay: overlay, receivedAt: receivedAt, room: room))
            // Too many wait: the answered timelines are not waited for any longer.
            if heldOffers.count > Self.maxHeldOffers { releaseHeldOffers(nowMs: nowMs, now: now, into: &effects) }
            return nil
        }
        guard admit(overlay, receivedAt: receivedAt, room: room, onScreen: screen.map(\.timelineId), into: &effects) else {
            return nil
        }
        return show(overlay, room: room, nowMs: nowMs, now: now, into: &effects)
    }

    /// Starts the tracking session of an overlay that arrived in `room` (live: stage `received`)
    /// and decides whether it may be shown (`OverlayAdmission`); when not, the session is closed
    /// with the reason. `onScreen` as `OverlayAdmission` takes it.
    mutating func admit(_ overlay: IncomingOverlay, receivedAt: Int64, room: RoomKey, onScreen: [String]?,
                        into effects: inout [ScreenEffect]) -> Bool {
        let trackingId = Self.trackingId(of: overlay, in: room)
        if let trackingId {
            effects.append(.track(.received(trackingId: trackingId, timelineId: overlay.timelineId, overlayType: overlay.kind.rawValue,
                                            emitTimestamp: overlay.emitTimestamp, durationSec: overlay.durationSec,
                                            receivedAt: receivedAt)))
        }
        guard let reason = OverlayAdmission.refusal(overlay, arrivedIn: room, current: context?.key, os: context?.settings.os,
                                                    answered: answered, onScreen: onScreen) else { return true }
        effects.append(.keptOffScreen(overlay, room: room, reason: reason))
        // A repeated emit of an overlay on screen (same tracking id) is that overlay's own
        // session, not a new one: it must not be cancelled.
        if let trackingId, !screen.contains(where: { $0.trackingId == trackingId }) {
            effects.append(.track(.keptOffScreen(trackingId: trackingId, reason: reason)))
        }
        return false
    }

    /// Shows a predict or lucky dialog the viewer opened (its render tracking starts now).
    /// Returns the dialog's overlay id, or the one already on screen for the timeline.
    mutating func showDialog(_ overlay: IncomingOverlay, room: RoomKey, nowMs: Int64, now: ContinuousClock.Instant,
                             into effects: inout [ScreenEffect]) -> String? {
        if let open = screen.first(where: { $0.timelineId == overlay.timelineId }) { return open.overlayId }
        return show(overlay, room: room, nowMs: nowMs, now: now, into: &effects)
    }

    /// Ends the tracking session of an overlay that arrived in `room` and will not be shown.
    func cancelTracking(_ overlay: IncomingOverlay, room: RoomKey, reason: HideReason, into effects: inout [ScreenEffect]) {
        guard let trackingId = Self.trackingId(of: overlay, in: room) else { return }
        effects.append(.track(.cancelled(trackingId: trackingId, reason: reason.rawValue)))
    }

    private mutating func show(_ overlay: IncomingOverlay, room: RoomKey, nowMs: Int64, now: ContinuousClock.Instant,
                               into effects: inout [ScreenEffect]) -> String? {
        guard let context, context.key == room,
              let url = overlay.templateURL(loggedIn: context.session.isLoggedIn, tenant: context.settings.tenant,
                                            fanclub: context.fanclub) else { return nil }
        let slot = overlay.kind == .minigame ? "minigame" : "dialog"
        // The players learn of the replacement first; logs and tracking of the replaced overlay
        // follow the new one's overlay.show.
        var replaced: [OnScreenOverlay] = []
        for old in screen where old.slot == slot {
            if let record = takeOff(old.overlayId, reason: .replaced, into: &effects) { replaced.append(record) }
        }
        let overlayId = nextOverlayId()
        let record = OnScreenOverlay(overlayId: overlayId, overlay: overlay, url: url, shownAt: nowMs,
                                     trackingId: Self.trackingId(of: overlay, in: room))
        screen.append(record)
        effects.append(.show(record, status: screen))
        for old in replaced { endTracking(of: old, reason: .replaced, into: &effects) }
        effects.append(.shown(record, replacing: replaced.map(\.overlayId)))
        if let trackingId = record.trackingId { effects.append(.track(.shown(trackingId: trackingId))) }
        if overlay.durationSec > 0,
           let target = expiries.set(overlayId, at: now + .seconds(overlay.durationSec) + Self.expiryGrace) {
            effects.append(.armTimer(at: target))
        }
        return overlayId
    }

    private mutating func nextOverlayId() -> String {
        defer { nextOverlayNumber += 1 }
        return "ov-\(idPrefix)-\(nextOverlayNumber)"
    }

    /// The shell armed the expiry timer for `target`: its generation, for `timerFired`.
    mutating func timerArmed(at target: ContinuousClock.Instant) -> Int { expiries.armed(at: target) }

    /// The expiry timer of `generation` fired at `now`: overlays due are hidden (`expired`).
    mutating func timerFired(_ generation: Int, now: ContinuousClock.Instant, into effects: inout [ScreenEffect]) {
        guard expiries.isCurrent(generation) else { return }
        let (due, next) = expiries.takeDue(now: now)
        if let next { effects.append(.armTimer(at: next)) }
        for overlayId in due { hide(overlayId, reason: .expired, into: &effects) }
    }

    // MARK: Hiding

    /// Hides one overlay; a revealed one gives the player its controls back.
    mutating func hide(_ overlayId: String, reason: HideReason, into effects: inout [ScreenEffect]) {
        guard let record = takeOff(overlayId, reason: reason, into: &effects) else { return }
        hidden(record, reason: reason, into: &effects)
    }

    /// Removes an overlay from the screen and tells the players (`overlay.hide`, and the
    /// controls back when it had hidden them).
    private mutating func takeOff(_ overlayId: String, reason: HideReason, into effects: inout [ScreenEffect]) -> OnScreenOverlay? {
        guard let index = screen.firstIndex(where: { $0.overlayId == overlayId }) else { return nil }
        let record = screen.remove(at: index)
        expiries.remove(overlayId)
        effects.append(.overlayGone(overlayId: overlayId))
        effects.append(.hide(record, reason: reason, status: screen))
        // The controls come back when the last revealed overlay leaves.
        if record.revealed && !controlsHidden { effects.append(.controls(visible: true)) }
        return record
    }

    /// After a hide: the log line and the end of the overlay's tracking session.
    private func hidden(_ record: OnScreenOverlay, reason: HideReason, into effects: inout [ScreenEffect]) {
        effects.append(.hidden(record, reason: reason))
        endTracking(of: record, reason: reason, into: &effects)
    }

    /// The end of a hidden overlay's tracking session (`rendered` cancelled, or the session closed).
    private func endTracking(of record: OnScreenOverlay, reason: HideReason, into effects: inout [ScreenEffect]) {
        if let trackingId = record.trackingId { effects.append(.track(.cancelled(trackingId: trackingId, reason: reason.rawValue))) }
    }

    /// `recall-overlay`: the backend takes a timeline back.
    mutating func recall(timelineId: String, into effects: inout [ScreenEffect]) {
        for record in screen where record.timelineId == timelineId { hide(record.overlayId, reason: .recalled, into: &effects) }
    }

    /// Hides everything (leaving or changing rooms). The room's context ends with it, so that an
    /// overlay of this room still on its way is not shown in the next one.
    mutating func removeAll(into effects: inout [ScreenEffect]) {
        context = nil
        answered = []
        // Minigames still waiting for the answered timelines belonged to the room left.
        answeredPending = nil
        let held = heldOffers
        heldOffers = []
        for offer in held {
            _ = admit(offer.overlay, receivedAt: offer.receivedAt, room: offer.room, onScreen: nil, into: &effects)
        }
        for record in screen { hide(record.overlayId, reason: .removeAll, into: &effects) }
    }

    /// A player connection went away: overlays it owned are hidden.
    mutating func clientDisconnected(_ connection: Int, into effects: inout [ScreenEffect]) {
        for record in screen where record.owner == connection { hide(record.overlayId, reason: .playerDisconnected, into: &effects) }
    }

    /// Posts the backend's `data` into the timeline's overlays; data over `OnScreenOverlay.rawLimit`
    /// bytes is not forwarded (the shell warns), so every event and the replay ring stay small.
    func post(timelineId: String, key: String, data: JSONValue, into effects: inout [ScreenEffect]) {
        let size = data.serializedByteCount
        guard size <= OnScreenOverlay.rawLimit else {
            effects.append(.postTooLarge(timelineId: timelineId, key: key, bytes: size))
            return
        }
        for record in screen where record.timelineId == timelineId {
            effects.append(.post(overlayId: record.overlayId, key: key, data: data))
        }
    }

    // MARK: Player reports

    /// `overlay.attached`: the player attached the web view and started loading. A connection
    /// that reports with `claim: false` (interactivectl, `connection` nil) never becomes the owner.
    mutating func attached(_ overlayId: String, connection: Int?, nowMs: Int64, into effects: inout [ScreenEffect]) throws(RPCError) {
        let index = try indexOf(overlayId)
        if let connection { screen[index].owner = connection }
        if let trackingId = screen[index].trackingId { effects.append(.track(.attached(trackingId: trackingId, at: nowMs))) }
    }

    /// `overlay.rendered`: the first report wins (true); later ones change nothing (false).
    mutating func rendered(_ overlayId: String, loaded: Bool, reason: String?, connection: Int?, nowMs: Int64,
                           into effects: inout [ScreenEffect]) throws(RPCError) -> Bool {
        let index = try indexOf(overlayId)
        claimOwner(index, connection)
        guard !screen[index].renderReported else { return false }
        screen[index].renderReported = true
        guard let trackingId = screen[index].trackingId else { return true }
        if loaded {
            effects.append(.track(.loaded(trackingId: trackingId, at: nowMs)))
        } else {
            effects.append(.loadFailed(screen[index], reason: reason))
            effects.append(.track(.failed(trackingId: trackingId, reason: reason, at: nowMs)))
        }
        return true
    }

    /// `overlay.dismiss`: the viewer closed it.
    mutating func dismiss(_ overlayId: String, into effects: inout [ScreenEffect]) throws(RPCError) {
        _ = try indexOf(overlayId)
        hide(overlayId, reason: .dismissed, into: &effects)
    }

    /// `overlay.bridge`: what the template posted. Returns the method's result.
    mutating func bridge(_ overlayId: String, message: BridgeMessage, connection: Int?,
                         into effects: inout [ScreenEffect]) throws(RPCError) -> JSONValue {
        let index = try indexOf(overlayId)
        claimOwner(index, connection)
        switch message.kind {
        case .show?, .open?:
            if !screen[index].revealed {
                let controlsWereHidden = controlsHidden
                screen[index].revealed = true
                effects.append(.reveal(overlayId: overlayId, status: screen))
                if !controlsWereHidden { effects.append(.controls(visible: false)) }
            }
        case .hide?, .close?:
            hide(overlayId, reason: .interactiveHide, into: &effects)
        case .actionReport?:
            switch message.adClick {
            case .link(let url, let loadable)?:
                effects.append(.link(overlayId: overlayId, url: url, loadable: loadable))
                return BridgeResult(handled: true, action: "link").json
            case .unusable(let reason)?:
                effects.append(.adClickDropped(overlayId: overlayId, reason: reason))
                return BridgeResult(handled: true, action: "ignored").json
            case nil:
                break
            }
            effects.append(.startAnswer(overlayId: overlayId, answer: message.data))
            return BridgeResult(handled: true, action: "answer").json
        case .ping?:
            break
        case nil:
            effects.append(.unknownBridgeMessage(overlayId: overlayId, type: message.type))
            return BridgeResult(handled: false).json
        }
        return BridgeResult(handled: true).json
    }

    // MARK: Queries

    /// The overlay on screen with this id.
    func overlay(_ overlayId: String) -> OnScreenOverlay? { screen.first { $0.overlayId == overlayId } }

    func indexOf(_ overlayId: String) throws(RPCError) -> Int {
        guard let index = screen.firstIndex(where: { $0.overlayId == overlayId }) else {
            throw RPCError.daemon(.unknownOverlay, "no overlay \(overlayId) is on screen")
        }
        return index
    }

    /// The first connection that reports on an overlay owns it, unless one attached it.
    private mutating func claimOwner(_ index: Int, _ connection: Int?) {
        if screen[index].owner == nil, let connection { screen[index].owner = connection }
    }

    /// The tracking id of an overlay that arrived in `room`: live mode only (VOD has no tracking).
    static func trackingId(of overlay: IncomingOverlay, in room: RoomKey) -> String? {
        room.mode == .live ? overlay.trackingId : nil
    }

    /// The player's controls are hidden while any overlay on screen is revealed.
    var controlsHidden: Bool { screen.contains(where: \.revealed) }
}
