import JSONValue

/// What the predict decision core is told.
enum PredictInput: Sendable, Equatable {
    /// The tenant changed (some tenants show no buttons).
    case tenant(String?)
    /// A predict or lucky overlay arrived in `room` and was admitted (`OverlayAdmission`).
    case offer(IncomingOverlay, room: RoomKey)
    /// `action-button-predict`: the button's images and visibility.
    case buttonData(ButtonData)
    /// `predict-result`: the answer counts of a timeline.
    case result(timelineId: String, counts: JSONValue)
    /// A result write that `.saveResult` asked for ended (`failed`: the store refused it).
    case resultSaved(timelineId: String, failed: Bool)
    /// The viewer opened the timeline's dialog (`predict.open`).
    case opened(timelineId: String)
    /// `recall-overlay` of a predict/lucky timeline.
    case recall(timelineId: String)
    /// Leaving the room.
    case removeAll
    /// The fade timer fired.
    case timerFired

    /// `action-button-predict`'s members, checked.
    struct ButtonData: Sendable, Equatable {
        let timelineId: String
        let kind: OverlayKind
        let imageIdle: String?
        let imagePower: String?
        let visible: Bool

        /// nil without a timeline id (or with one over `IncomingOverlay.maxIdBytes`). Image URLs a
        /// player may not load are left out.
        init?(_ payload: JSONValue) {
            guard let timelineId = IncomingOverlay.id(payload["timelineId"]) else { return nil }
            self.timelineId = timelineId
            kind = OverlayKind(typeTimeline: payload["typeTimeline"]?.lenientDouble.flatMap { Int(exactly: $0) })
            imageIdle = payload["imageIdle"]?.stringValue.flatMap(PredictCore.loadableImage)
            imagePower = payload["imagePower"]?.stringValue.flatMap(PredictCore.loadableImage)
            visible = payload["visible"]?.lenientBool ?? true
        }
    }
}

/// What the predict decision core asks its shell to do, in order.
enum PredictEffect: Sendable, Equatable {
    /// Publish `predict.button`.
    case publish(PredictButton)
    /// Set the status board's `predict` section to these buttons.
    case status([PredictButton])
    /// End the tracking session of an overlay that will not be shown.
    case cancelTracking(IncomingOverlay, room: RoomKey, reason: HideReason)
    /// Hide the timeline's dialogs on screen (`recall-overlay`).
    case recallDialogs(timelineId: String)
    /// Post a message into the timeline's dialogs on screen.
    case post(timelineId: String, key: String, data: JSONValue)
    /// Write a result to the store, off the display path; feed the end back as `.resultSaved`.
    case saveResult(timelineId: String, counts: JSONValue)
    /// A result was not written: too many writes were waiting for the store.
    case resultNotSaved(timelineId: String)
    /// Arm the one fade timer for this instant (replacing any armed one); nil: disarm it.
    case armTimer(at: ContinuousClock.Instant?)
}

/// The predict and lucky timelines of the room as a pure state machine (seed 000): the buttons
/// players draw (power image when a question opens, idle once opened, full opacity for
/// `fadeDelay` after a change, then half), the dialog each opens, and the predict results
/// (posted into the dialogs, kept in memory for the room and written to the store in order,
/// one write at a time, so the backend's event path never waits for SQLite).
struct PredictCore: Sendable {
    /// Tenants whose players do not show predict/lucky buttons (seed 000).
    static let tenantsWithoutButtons: Set<String> = ["vtvlive", "onlivetv", "VTVprime"]
    /// How long a button stays at full opacity after a change.
    static let fadeDelay: Duration = .seconds(5)
    /// The most result writes kept waiting for the store (one per timeline).
    static let maxWaitingSaves = 256
    /// The most timelines (overlays and buttons) known in a room; past it the one heard of
    /// least recently goes: its button disappears, a dialog of it still open closes, and its
    /// tracking session is cancelled (`replaced_by_new_overlay`). A backend cannot make the
    /// daemon hold more.
    static let maxTimelines = 128

    private var tenant: String?
    /// The predict/lucky overlays received, by timeline, and the room they arrived in.
    private(set) var timelines: [String: IncomingOverlay] = [:]
    private(set) var room: RoomKey?
    private(set) var buttons: [String: PredictButton] = [:]
    /// When each button at full opacity fades.
    private var fades: [String: ContinuousClock.Instant] = [:]
    private var armedAt: ContinuousClock.Instant?
    /// The results of the room's timelines, latest first served to a dialog that opens.
    private(set) var results: JSONObject = [:]
    /// The timelines of `timelines` and `buttons`, the one heard of least recently first.
    private var heardOf: [String] = []
    /// The result write under way, and the latest result of each timeline waiting for it.
    private(set) var saving: String?
    private var waitingSaves: [(timelineId: String, counts: JSONValue)] = []

    init(tenant: String? = nil) {
        self.tenant = tenant
    }

    var showsButtons: Bool { !(tenant.map(Self.tenantsWithoutButtons.contains) ?? false) }

    /// The overlay and room of a timeline's dialog; nil when the room has no such timeline.
    func dialog(_ timelineId: String) -> (overlay: IncomingOverlay, room: RoomKey)? {
        guard let overlay = timelines[timelineId], let room else { return nil }
        return (overlay, room)
    }

    /// Takes one input at `now` (the monotonic clock the fade runs on).
    mutating func handle(_ input: PredictInput, now: ContinuousClock.Instant) -> [PredictEffect] {
        var effects: [PredictEffect] = []
        switch input {
        case .tenant(let tenant):
            setTenant(tenant, now: now, into: &effects)
        case .offer(let overlay, let room):
            offer(overlay, room: room, now: now, into: &effects)
        case .buttonData(let data):
            buttonData(data, now: now, into: &effects)
        case .result(let timelineId, let counts):
            if timelines[timelineId] != nil { results[timelineId] = counts }
            // The store keeps results of this room's timelines only: a backend cannot fill it
            // with timelines the viewer never had.
            if timelines[timelineId] != nil || buttons[timelineId] != nil { save(timelineId, counts, into: &effects) }
            effects.append(.post(timelineId: timelineId, key: "UPDATE_COUTER", data: counts))
        case .resultSaved(let timelineId, _):
            guard saving == timelineId else { break }
            saving = nil
            if !waitingSaves.isEmpty {
                let next = waitingSaves.removeFirst()
                save(next.timelineId, next.counts, into: &effects)
            }
        case .opened(let timelineId):
            if var button = buttons[timelineId], button.image != .idle {
                button.image = .idle
                update(button, now: now, into: &effects)
            }
        case .recall(let timelineId):
            guard let overlay = timelines.removeValue(forKey: timelineId), let room else { break }
            results[timelineId] = nil
            effects.append(.cancelTracking(overlay, room: room, reason: .recalled))
            effects.append(.recallDialogs(timelineId: timelineId))
            if var button = buttons[timelineId] {
                button.visible = false
                update(button, now: now, into: &effects)
            }
        case .removeAll:
            removeAll(into: &effects)
        case .timerFired:
            fadeDue(now: now, into: &effects)
        }
        rearm(into: &effects)
        return effects
    }

    // MARK: Buttons

    private mutating func offer(_ overlay: IncomingOverlay, room: RoomKey, now: ContinuousClock.Instant,
                                into effects: inout [PredictEffect]) {
        if self.room != room {
            // The first timeline of a room (removeAll emptied those of the previous one).
            timelines = [:]
            results = [:]
            heardOf.removeAll { buttons[$0] == nil }
            self.room = room
        }
        if let previous = timelines[overlay.timelineId], previous.trackingId != overlay.trackingId {
            effects.append(.cancelTracking(previous, room: room, reason: .replaced))
        }
        timelines[overlay.timelineId] = overlay
        heard(overlay.timelineId, into: &effects)
        var button = buttons[overlay.timelineId] ?? PredictButton(
            timelineId: overlay.timelineId, kind: overlay.kind, visible: true, image: .power,
            imageIdle: nil, imagePower: nil, opacity: 1)
        button.kind = overlay.kind
        button.visible = true
        button.image = .power
        button.imageIdle = overlay.raw["imageIdle"]?.stringValue.flatMap(Self.loadableImage) ?? button.imageIdle
        button.imagePower = overlay.raw["imagePower"]?.stringValue.flatMap(Self.loadableImage) ?? button.imagePower
        update(button, now: now, into: &effects)
    }

    private mutating func buttonData(_ data: PredictInput.ButtonData, now: ContinuousClock.Instant,
                                     into effects: inout [PredictEffect]) {
        heard(data.timelineId, into: &effects)
        var button = buttons[data.timelineId] ?? PredictButton(
            timelineId: data.timelineId, kind: data.kind == .minigame ? .predict : data.kind, visible: true,
            image: timelines[data.timelineId] == nil ? .idle : .power, imageIdle: nil, imagePower: nil, opacity: 1)
        if data.kind != .minigame { button.kind = data.kind }
        button.imageIdle = data.imageIdle ?? button.imageIdle
        button.imagePower = data.imagePower ?? button.imagePower
        button.visible = data.visible
        update(button, now: now, into: &effects)
    }

    /// A changed button: at full opacity, and unless the tenant shows no buttons, in the status,
    /// published and, while visible, due to fade.
    private mutating func update(_ changed: PredictButton, now: ContinuousClock.Instant, into effects: inout [PredictEffect]) {
        var button = changed
        button.opacity = 1
        buttons[button.timelineId] = button
        guard showsButtons else { return }
        effects.append(.status(sortedButtons))
        effects.append(.publish(button))
        fades[button.timelineId] = button.visible ? now + Self.fadeDelay : nil
    }

    /// A tenant that shows no buttons (seed 000) has none anywhere: not in events, not in the
    /// status (so no snapshot lists one). When the tenant changes, the players learn which
    /// buttons appear or go: the visible ones are published (visible, or hidden when the new
    /// tenant shows none).
    private mutating func setTenant(_ tenant: String?, now: ContinuousClock.Instant, into effects: inout [PredictEffect]) {
        let showed = showsButtons
        self.tenant = tenant
        guard showsButtons != showed else { return }
        effects.append(.status(showsButtons ? sortedButtons : []))
        for var button in sortedButtons where button.visible {
            if showsButtons {
                update(button, now: now, into: &effects)
            } else {
                button.visible = false
                effects.append(.publish(button))
            }
        }
        if !showsButtons { fades = [:] }
    }

    private mutating func fadeDue(now: ContinuousClock.Instant, into effects: inout [PredictEffect]) {
        armedAt = nil
        let due = fades.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        for (timelineId, _) in due {
            fades[timelineId] = nil
            guard var button = buttons[timelineId], button.visible, button.opacity != 0.5 else { continue }
            button.opacity = 0.5
            buttons[timelineId] = button
            effects.append(.publish(button))
        }
    }

    private mutating func removeAll(into effects: inout [PredictEffect]) {
        if let room {
            for overlay in timelines.values.sorted(by: { $0.timelineId < $1.timelineId }) {
                effects.append(.cancelTracking(overlay, room: room, reason: .removeAll))
            }
        }
        timelines = [:]
        results = [:]
        heardOf = []
        room = nil
        for var button in sortedButtons where button.visible {
            button.visible = false
            if showsButtons { effects.append(.publish(button)) }
        }
        buttons = [:]
        fades = [:]
        effects.append(.status([]))
    }

    /// `timelineId` was heard of now: it becomes the most recent, and past `maxTimelines` the
    /// least recent one is forgotten.
    private mutating func heard(_ timelineId: String, into effects: inout [PredictEffect]) {
        if let index = heardOf.firstIndex(of: timelineId) { heardOf.remove(at: index) }
        heardOf.append(timelineId)
        guard heardOf.count > Self.maxTimelines else { return }
        let oldest = heardOf.removeFirst()
        results[oldest] = nil
        fades[oldest] = nil
        if let overlay = timelines.removeValue(forKey: oldest), let room {
            effects.append(.cancelTracking(overlay, room: room, reason: .replaced))
            effects.append(.recallDialogs(timelineId: oldest))
        }
        if var button = buttons.removeValue(forKey: oldest), showsButtons {
            effects.append(.status(sortedButtons))
            if button.visible {
                button.visible = false
                effects.append(.publish(button))
            }
        }
    }

    /// The fade timer follows the earliest fade.
    private mutating func rearm(into effects: inout [PredictEffect]) {
        let earliest = fades.values.min()
        guard earliest != armedAt else { return }
        armedAt = earliest
        effects.append(.armTimer(at: earliest))
    }

    private var sortedButtons: [PredictButton] { buttons.values.sorted { $0.timelineId < $1.timelineId } }

    // MARK: Results

    /// One write at a time, in order; a timeline's later result replaces its earlier one still waiting.
    private mutating func save(_ timelineId: String, _ counts: JSONValue, into effects: inout [PredictEffect]) {
        guard saving != nil else {
            saving = timelineId
            effects.append(.saveResult(timelineId: timelineId, counts: counts))
            return
        }
        if let index = waitingSaves.firstIndex(where: { $0.timelineId == timelineId }) {
            waitingSaves[index].counts = counts
        } else if waitingSaves.count < Self.maxWaitingSaves {
            waitingSaves.append((timelineId, counts))
        } else {
            effects.append(.resultNotSaved(timelineId: timelineId))
        }
    }

    /// A button image the player may load; any other URL is ignored (the button keeps its last).
    static func loadableImage(_ url: String) -> String? { PlayerURL.isLoadable(url) ? url : nil }
}
