import IPCProtocol
import JSONValue

/// An overlay the players were told to show and that has not been hidden yet.
struct OnScreenOverlay: Sendable, Equatable {
    let overlayId: String
    let overlay: IncomingOverlay
    let url: String
    let shownAt: Int64
    /// The overlay's `_trackingId` in live mode; nil when untracked (VOD, or none sent).
    let trackingId: String?
    /// True once the template said INTERACTIVE_SHOW_ANALYTICS (the player hides its controls).
    var revealed = false
    /// The connection that sent `overlay.attached`, else the first that reported on it; its
    /// disconnection hides the overlay (`player_disconnected`).
    var owner: Int?
    /// True once `overlay.rendered` was reported (the first report wins).
    var renderReported = false

    var kind: OverlayKind { overlay.kind }
    var timelineId: String { overlay.timelineId }

    /// Where the player draws it; a predict or lucky dialog without an alignment is at the centre
    /// (4), and a missing width or height is the whole video area (`IncomingOverlay.percentage`).
    var placement: OverlayPlacement {
        OverlayPlacement(location: overlay.location ?? 4, widthPct: overlay.widthPct, heightPct: overlay.heightPct)
    }

    /// The `overlay.show` event's data. `raw` is the backend's payload (its text as it came, when
    /// known) when it takes at most `rawLimit` bytes; a larger one is left out (`raw: null`,
    /// `rawOmittedBytes`), so a backend cannot make every event, queue and the replay ring carry
    /// megabytes.
    var showEvent: OverlayShow {
        var event = OverlayShow(overlayId: overlayId, timelineId: timelineId, kind: kind.rawValue, url: url, placement: placement,
                                durationSec: overlay.durationSec, raw: overlay.raw, rawText: overlay.rawText)
        // Counted only when the packet it came in does not bound it already.
        if (overlay.rawByteBound ?? .max) > Self.rawLimit {
            let rawBytes = overlay.rawText?.count ?? overlay.raw.serializedByteCount
            if rawBytes > Self.rawLimit {
                event.raw = .null
                event.rawText = nil
                event.rawOmittedBytes = rawBytes
            }
        }
        return event
    }

    /// The largest `raw` payload an `overlay.show` carries (docs/ipc.md, "Limits").
    static let rawLimit = 16 * 1024

    /// The board's `overlays` section for `screen`.
    static func status(of screen: [OnScreenOverlay]) -> JSONValue { .array(screen.map(\.status)) }

    /// The overlay as `daemon.status` lists it.
    var status: JSONValue {
        OverlayStatus(overlayId: overlayId, timelineId: timelineId, kind: kind.rawValue, url: url, placement: placement,
                      durationSec: overlay.durationSec, revealed: revealed, shownAt: Timestamp.rfc3339(shownAt),
                      tracked: trackingId != nil).json
    }

    /// Which overlays replace each other: one minigame at a time, one predict/lucky dialog at a time.
    var slot: String { kind == .minigame ? "minigame" : "dialog" }
}
