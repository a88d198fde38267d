import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

@Suite struct OverlayModelTests {
    private let overlay: JSONValue = [
        "timelineId": 42, "typeTimeline": "3", "url": "https://cdn/q.html?id=1#top",
        "position": ["alignment": 8, "width": "40", "height": 30], "duration": 30, "targets": ["linuxstb"],
        "traceLock": true, "requireBet": "true", "betAmount": 50, "extra": "kept",
    ]

    @Test func bothPayloadShapesAndLenientFields() throws {
        let wrapped = try #require(IncomingOverlay(payload: ["data": overlay, "_trackingId": "t1", "_emitTimestamp": 1764400000000]))
        var flatObject = overlay.objectValue ?? [:]
        flatObject["_trackingId"] = "t1"
        flatObject["_emitTimestamp"] = 1764400000000
        let flat = try #require(IncomingOverlay(payload: .object(flatObject)))
        for parsed in [wrapped, flat] {
            #expect(parsed.timelineId == "42")
            #expect(parsed.kind == .predict)
            #expect(parsed.location == 8)
            #expect(parsed.widthPct == 40)
            #expect(parsed.requireBet)
            #expect(parsed.trackingId == "t1")
            #expect(parsed.emitTimestamp == 1764400000000)
            #expect(parsed.raw["extra"] == "kept")
        }
        #expect(IncomingOverlay(payload: ["url": "x"]) == nil)
    }

    /// Timeline and tracking ids key the daemon's state: longer than 256 bytes, no overlay.
    @Test func idsLongerThan256BytesMakeNoOverlay() {
        let longest = String(repeating: "é", count: 128)  // 256 bytes
        #expect(IncomingOverlay(payload: ["timelineId": .string(longest), "_trackingId": .string(longest)]) != nil)
        #expect(IncomingOverlay(payload: ["timelineId": .string(longest + "x")]) == nil)
        #expect(IncomingOverlay(payload: ["data": ["timelineId": "t1"], "_trackingId": .string(longest + "x")]) == nil)
    }

    /// `_emitTimestamp` comes from the backend: only whole milliseconds from 0 to 2^53 are kept.
    @Test func implausibleEmitTimestampsAreIgnored() throws {
        for value: JSONValue in [-9223372036854775808, -1, 1e300, 2.5e16, "x"] {
            let parsed = try #require(IncomingOverlay(payload: ["data": overlay, "_trackingId": "t1", "_emitTimestamp": value]))
            #expect(parsed.emitTimestamp == nil, "\(value)")
        }
        let parsed = try #require(IncomingOverlay(payload: ["data": overlay, "_emitTimestamp": "1764400000000"]))
        #expect(parsed.emitTimestamp == 1764400000000)
    }

    @Test func alignmentOutsideZeroToEightIsInvalid() throws {
        var object = overlay.objectValue ?? [:]
        object["position"] = ["alignment": 9]
        #expect(try #require(IncomingOverlay(payload: .object(object))).location == nil)
        object["position"] = ["alignment": 2.5]
        #expect(try #require(IncomingOverlay(payload: .object(object))).location == nil)
    }

    @Test func targetsAndTemplateURL() throws {
        let parsed = try #require(IncomingOverlay(payload: overlay))
        #expect(parsed.isTargeted(os: "linuxstb"))
        #expect(!parsed.isTargeted(os: "iphone"))
        #expect(parsed.templateURL(loggedIn: true, tenant: "onlivev2", fanclub: false)
            == "https://cdn/q.html?id=1&logged=true&duration=30&fanclub=false#top")
        #expect(parsed.templateURL(loggedIn: false, tenant: "vtvlive", fanclub: false)
            == "https://cdn/q.html?id=1&logged=false&duration=30#top")
        #expect(parsed.templateURL(loggedIn: true, tenant: "onlivev2", fanclub: true)
            == "https://cdn/q.html?id=1&logged=true&duration=30#top")
    }

    @Test func bridgeMessagesAsObjectsOrStrings() throws {
        let fromString = try #require(BridgeMessage(.string(#"{"type":"INTERACTIVE_ACTION_REPORT","data":{"action":"CLICK_ADS","url":"https://ad"}}"#)))
        #expect(fromString.kind == .actionReport)
        #expect(fromString.adClick == .link(url: "https://ad", loadable: true))
        let fromObject = try #require(BridgeMessage(["type": "INTERACTIVE_SHOW_ANALYTICS"]))
        #expect(fromObject.kind == .show)
        #expect(fromObject.adClick == nil)
        #expect(BridgeMessage(.string("not json")) == nil)
        #expect(BridgeMessage(["data": 1]) == nil)
        #expect(BridgeMessage(["type": "SOMETHING_ELSE"])?.kind == nil)
    }
}
