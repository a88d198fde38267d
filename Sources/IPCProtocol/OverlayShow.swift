import JSONValue

/// The data of an `overlay.show` event: load `url` hidden and transparent at `placement`,
/// report `overlay.attached` and `overlay.rendered`, reveal it on `overlay.reveal`.
public struct OverlayShow: EventData {
    public static let type = EventType.overlayShow
    public var overlayId: String
    public var timelineId: String
    /// `minigame`, `predict` or `lucky`.
    public var kind: String
    public var url: String
    public var placement: OverlayPlacement
    /// Seconds; 0 when the overlay has no time limit.
    public var durationSec: Int
    /// The backend's overlay object; null when it was larger than the daemon forwards.
    public var raw: JSONValue
    /// The size of a `raw` left out, in bytes.
    public var rawOmittedBytes: Int?
    /// `raw` as JSON text, as the backend wrote it: what the daemon writes for `raw` when it is
    /// set (the same value, relayed rather than written again). Its bytes hold no line break.
    public var rawText: [UInt8]?

    public init(overlayId: String, timelineId: String, kind: String, url: String, placement: OverlayPlacement,
                durationSec: Int, raw: JSONValue, rawOmittedBytes: Int? = nil, rawText: [UInt8]? = nil) {
        self.overlayId = overlayId
        self.timelineId = timelineId
        self.kind = kind
        self.url = url
        self.placement = placement
        self.durationSec = durationSec
        self.raw = raw
        self.rawOmittedBytes = rawOmittedBytes
        self.rawText = rawText
    }

    public init?(data: JSONValue) {
        guard let overlayId = data["overlayId"]?.stringValue, let timelineId = data["timelineId"]?.stringValue,
              let url = data["url"]?.stringValue, let placement = data["placement"].flatMap(OverlayPlacement.init(json:))
        else { return nil }
        self.init(overlayId: overlayId, timelineId: timelineId, kind: data["kind"]?.stringValue ?? "minigame", url: url,
                  placement: placement, durationSec: data["durationSec"]?.intValue ?? 0, raw: data["raw"] ?? .null,
                  rawOmittedBytes: data["rawOmittedBytes"]?.intValue)
    }

    public var data: JSONValue {
        var members: JSONObject = [
            "overlayId": .string(overlayId), "timelineId": .string(timelineId), "kind": .string(kind), "url": .string(url),
            "placement": placement.json, "durationSec": .number(Double(durationSec)), "raw": raw,
        ]
        members.setIfPresent("rawOmittedBytes", rawOmittedBytes.map { .number(Double($0)) })
        return .object(members)
    }

    /// `data`'s text, members in key order, written without building `data` (every overlay
    /// shown), `raw` as `rawText` when that is set.
    public func writeData(to out: inout [UInt8]) {
        JSONWriter.append(to: &out) { writer in
            writer.beginObject()
            writer.member("durationSec", durationSec)
            writer.member("kind", kind)
            writer.member("overlayId", overlayId)
            writer.key("placement")
            placement.write(to: &writer)
            writer.key("raw")
            if let rawText { writer.json(rawText) } else { writer.value(raw) }
            if let rawOmittedBytes { writer.member("rawOmittedBytes", rawOmittedBytes) }
            writer.member("timelineId", timelineId)
            writer.member("url", url)
            writer.endObject()
        }
    }
}
