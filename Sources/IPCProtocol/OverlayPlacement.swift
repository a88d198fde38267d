import JSONValue

/// Where an overlay goes (`overlay.show` `placement`): a box of `widthPct` × `heightPct` of the
/// video area, at one of nine locations, row-major from the top-left (0 top-left, 1 top centre,
/// 2 top-right, 3 middle-left, 4 centre, …, 8 bottom-right). Rows and columns are flush with
/// the area's edges, or centred.
public struct OverlayPlacement: Sendable, Equatable {
    public var location: Int
    public var widthPct: Double
    public var heightPct: Double

    public init(location: Int, widthPct: Double, heightPct: Double) {
        self.location = location
        self.widthPct = widthPct
        self.heightPct = heightPct
    }

    public init?(json: JSONValue) {
        guard let location = json["location"]?.intValue, (0...8).contains(location),
              let widthPct = json["widthPct"]?.doubleValue, let heightPct = json["heightPct"]?.doubleValue else { return nil }
        self.init(location: location, widthPct: widthPct, heightPct: heightPct)
    }

    public var json: JSONValue {
        ["location": .number(Double(location)), "widthPct": .number(widthPct), "heightPct": .number(heightPct)]
    }

    /// `json`'s text, the bytes `json.serialized()` makes, written without building it.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("heightPct", heightPct)
        writer.member("location", location)
        writer.member("widthPct", widthPct)
        writer.endObject()
    }

    /// A rectangle in the player's own units (pixels, points), origin at the top-left.
    public struct Rect: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// The overlay's frame in `area`: the video area, or the safe area inside it on a screen
    /// that overscans. Percentages outside 0–100 (or not finite) are clamped; a location
    /// outside 0–8 counts as the centre.
    public func frame(in area: Rect) -> Rect {
        let width = area.width * Self.fraction(widthPct)
        let height = area.height * Self.fraction(heightPct)
        let cell = (0...8).contains(location) ? location : 4
        let column = Double(cell % 3)
        let row = Double(cell / 3)
        return Rect(x: area.x + column * (area.width - width) / 2, y: area.y + row * (area.height - height) / 2,
                    width: width, height: height)
    }

    private static func fraction(_ percent: Double) -> Double {
        guard percent.isFinite else { return 1 }
        return min(max(percent, 0), 100) / 100
    }
}
