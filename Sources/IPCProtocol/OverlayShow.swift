import JSONValue

/// The data of an `overlay.show` event: load `url` hidden and transparent at `placement`,
/// report `overlay.attached` and `overlay.rendered`, reveal it on `overlay.reveal`.
public struct OverlayShow: Sendable, Equatable {
    public var overlayId: String
    public var timelineId: String
    /// `minigame`, `predict` or `lucky`.
    public var kind: String
    public var url: String
    public var placement: OverlayPlacement
    /// Seconds; 0 when the overlay has no time limit.
    public var durationSec: Int

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let timelineId = data["timelineId"]?.stringValue,
              let url = data["url"]?.stringValue, let placement = data["placement"].flatMap(OverlayPlacement.init(json:))
        else { return nil }
        self.overlayId = overlayId
        self.timelineId = timelineId
        kind = data["kind"]?.stringValue ?? "minigame"
        self.url = url
        self.placement = placement
        durationSec = data["durationSec"]?.intValue ?? 0
    }
}
