import IPCProtocol
import JSONValue
import Testing

@Suite struct OverlayPlacementTests {
    private let video = OverlayPlacement.Rect(x: 0, y: 0, width: 1000, height: 500)

    @Test func theNineLocationsAreRowMajorFromTheTopLeft() {
        let origins = (0...8).map { location -> [Double] in
            let frame = OverlayPlacement(location: location, widthPct: 40, heightPct: 20).frame(in: video)
            return [frame.x, frame.y]
        }
        #expect(origins == [[0, 0], [300, 0], [600, 0],
                            [0, 200], [300, 200], [600, 200],
                            [0, 400], [300, 400], [600, 400]])
    }

    @Test func sizesArePercentagesOfTheArea() {
        let frame = OverlayPlacement(location: 4, widthPct: 40, heightPct: 30).frame(in: video)
        #expect(frame == .init(x: 300, y: 175, width: 400, height: 150))
    }

    @Test func aSafeAreaOffsetsTheFrame() {
        let safe = OverlayPlacement.Rect(x: 50, y: 25, width: 900, height: 450)
        let frame = OverlayPlacement(location: 8, widthPct: 50, heightPct: 50).frame(in: safe)
        #expect(frame == .init(x: 500, y: 250, width: 450, height: 225))
    }

    @Test func outOfRangeValuesAreClamped() {
        let frame = OverlayPlacement(location: 12, widthPct: 250, heightPct: -.infinity).frame(in: video)
        #expect(frame == .init(x: 0, y: 0, width: 1000, height: 500))
        let nan = OverlayPlacement(location: 0, widthPct: .nan, heightPct: -5).frame(in: video)
        #expect(nan == .init(x: 0, y: 0, width: 1000, height: 0))
    }

    @Test func anOverlayShowIsRead() throws {
        let data: JSONValue = ["overlayId": "ov-1", "timelineId": "tl1", "kind": "minigame", "url": "http://x/quiz.html",
                               "placement": ["location": 2, "widthPct": 40, "heightPct": 30], "durationSec": 30]
        let show = try #require(OverlayShow(data: data))
        #expect(show.placement == OverlayPlacement(location: 2, widthPct: 40, heightPct: 30))
        #expect(show.durationSec == 30)
        #expect(OverlayShow(data: ["overlayId": "ov-1"]) == nil)
    }
}
