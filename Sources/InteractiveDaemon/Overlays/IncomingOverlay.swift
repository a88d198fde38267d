import JSONValue

/// What an overlay is, by `typeTimeline`.
enum OverlayKind: String, Sendable {
    case minigame, predict, lucky

    init(typeTimeline: Int?) {
        switch typeTimeline {
        case 3: self = .predict
        case 5: self = .lucky
        default: self = .minigame
        }
    }
}

/// An overlay as the backend sent it (`overlay`, `ex-overlay`, or a VOD timeline), normalised.
///
/// Both payload shapes are accepted: `{"data":{…overlay…},"_trackingId","_emitTimestamp"}` and
/// the overlay object itself with `_trackingId`/`_emitTimestamp` inside. Ids may be strings or
/// numbers; unknown fields stay in `raw`.
struct IncomingOverlay: Sendable, Equatable {
    let timelineId: String
    let kind: OverlayKind
    let url: String?
    /// `position.alignment` when it is a whole number from 0 to 8.
    let location: Int?
    let widthPct: Double
    let heightPct: Double
    /// Seconds; 0 when the overlay has no duration.
    let durationSec: Int
    let targets: [String]?
    let traceLock: Bool
    let requireVip: Bool
    let requireBet: Bool
    let requireFanclub: Bool
    let betAmount: Double
    let trackingId: String?
    let emitTimestamp: Int64?
    /// The overlay object as received (unwrapped from `data`).
    let raw: JSONValue
    /// At least `raw`'s size as JSON text (the packet it came in), when known.
    let rawByteBound: Int?
    /// `raw`'s JSON text as the backend wrote it, when known and when it fits in a JSON line as
    /// it is: `overlay.show` relays it instead of writing `raw` again.
    let rawText: [UInt8]?

    /// The longest timeline or tracking id taken, in UTF-8 bytes: the daemon keys its screen and
    /// tracking state (a thousand finished sessions included) by them.
    static let maxIdBytes = 256

    /// A backend id (string or number) of at most `maxIdBytes`; nil otherwise.
    static func id(_ value: JSONValue?) -> String? {
        guard let id = value?.idString, id.utf8.count <= maxIdBytes else { return nil }
        return id
    }

    /// nil when the payload has no timeline id (nothing can be shown or tracked without it), or
    /// when its timeline or tracking id is longer than `maxIdBytes`. `text` gives the overlay
    /// object's JSON text as it came (`data` for the payload's `data` member, nil for the payload
    /// itself), when known.
    init?(payload: JSONValue, byteBound: Int? = nil, text: (_ member: String?) -> ArraySlice<UInt8>? = { _ in nil }) {
        let overlay: JSONValue
        let overlayText: ArraySlice<UInt8>?
        if case .object = payload["data"] ?? .null {
            overlay = payload["data"] ?? .null
            overlayText = text("data")
        } else {
            overlay = payload
            overlayText = text(nil)
        }
        guard case .object = overlay, let timelineId = Self.id(overlay["timelineId"]) else { return nil }
        let trackingValue = payload["_trackingId"] ?? overlay["_trackingId"]
        let trackingId = Self.id(trackingValue)
        if trackingValue?.idString != nil && trackingId == nil { return nil }
        self.timelineId = timelineId
        self.trackingId = trackingId
        kind = OverlayKind(typeTimeline: overlay["typeTimeline"]?.lenientDouble.flatMap { Int(exactly: $0) })
        url = overlay["url"]?.stringValue
        let position = overlay["position"]
        if let alignment = position?["alignment"]?.lenientDouble, alignment.rounded() == alignment, (0...8).contains(alignment) {
            location = Int(alignment)
        } else {
            location = nil
        }
        widthPct = Self.percentage(position?["width"]?.lenientDouble)
        heightPct = Self.percentage(position?["height"]?.lenientDouble)
        durationSec = overlay["duration"]?.lenientDouble.map(Self.clampedDuration) ?? 0
        targets = overlay["targets"]?.arrayValue?.compactMap(\.stringValue)
        traceLock = overlay["traceLock"]?.lenientBool ?? false
        requireVip = overlay["requireVip"]?.lenientBool ?? false
        requireBet = overlay["requireBet"]?.lenientBool ?? false
        requireFanclub = overlay["requireFanclub"]?.lenientBool ?? false
        betAmount = overlay["betAmount"]?.lenientDouble ?? 0
        emitTimestamp = (payload["_emitTimestamp"] ?? overlay["_emitTimestamp"])?.lenientDouble.flatMap(Self.epochMilliseconds)
        raw = overlay
        rawByteBound = byteBound
        // White space between tokens may hold line breaks, which would end the event's line
        // (such text is written again from `raw`).
        rawText = overlayText.flatMap { text in
            text.withUnsafeBufferPointer(JSONValue.containsControlBytes) ? nil : Array(text)
        }
    }

    /// A placement size in percent of the video area: above 0 and at most 100; anything else
    /// (missing, not a number, out of range) is the whole area.
    static func percentage(_ value: Double?) -> Double {
        guard let value, value.isFinite, value > 0 else { return 100 }
        return min(value, 100)
    }

    /// The longest `duration` honoured: a day. Longer (or negative, or not a number) is clamped.
    static let maxDurationSec = 86_400

    static func clampedDuration(_ seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int(min(seconds.rounded(), Double(maxDurationSec)))
    }

    /// True when `url` may be handed to a player (see `PlayerURL`).
    var hasLoadableURL: Bool { url.map(PlayerURL.isLoadable) ?? false }

    /// A backend timestamp in milliseconds since the epoch, kept only when it is a whole number
    /// from 0 to 2^53 (what JSON carries exactly); anything else is treated as absent.
    static func epochMilliseconds(_ value: Double) -> Int64? {
        guard value.isFinite, value >= 0, value <= 9_007_199_254_740_992 else { return nil }
        return Int64(exactly: value.rounded())
    }

    /// Whether the overlay is for this platform (`targets` holds `os` or `all`; no list means all).
    func isTargeted(os: String?) -> Bool {
        guard let targets else { return true }
        return targets.contains("all") || (os.map(targets.contains) ?? false)
    }

    /// The template URL ready to load: `logged`, `duration` and, for `onlivev2` viewers outside
    /// the media's fanclub, `fanclub=false`.
    func templateURL(loggedIn: Bool, tenant: String?, fanclub: Bool) -> String? {
        guard let url, !url.isEmpty else { return nil }
        var parameters = [("logged", loggedIn ? "true" : "false"), ("duration", String(durationSec))]
        if tenant == "onlivev2" && !fanclub { parameters.append(("fanclub", "false")) }
        return URLText.appendingQuery(url, parameters)
    }
}
