import IPCProtocol
import JSONValue
import Runtime
import RuntimeTesting
import Testing
@testable import InteractiveDaemon

/// Events published in one `EventBus.batch` reach each subscriber in one push (one `send` when
/// its writer is idle), in order, each still its own line with its own seq.
@Suite @LoopActor struct EventBusBatchTests {
    private func lines(_ items: [OutboundQueue.Item]?) -> [String] {
        (items ?? []).flatMap { item -> [String] in
            switch item {
            case .line(let bytes): return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            case .lagged(let missed): return ["lagged(\(missed))"]
            }
        }
    }

    @Test func aBatchsEventsAreOnePushOfTheirLinesInOrder() async throws {
        let bus = EventBus(bootId: "b", timers: ManualScheduler())
        let queue = OutboundQueue(eventLimit: 16)
        bus.subscribe(connection: 1, queue: queue, prefixes: nil, role: .control, since: nil, sinceBootId: nil) { _ in Array("subscribed\n".utf8) }
        _ = await queue.next()
        bus.batch {
            bus.publish(OverlayHideEvent(overlayId: "o1", timelineId: "t1", reason: "replaced"), section: "overlays", builtStatus: { [] })
            bus.batch { bus.publish("player.controls", ["visible": false]) }
            bus.publish(OverlayHideEvent(overlayId: "o2", timelineId: "t2", reason: "expired"), section: "overlays", builtStatus: { [] })
        }
        let items = await queue.next()
        #expect(items?.count == 1, "one push")
        let seqs = try lines(items).map { try #require(EventEnvelope(params: try JSONValue.parse($0)["params"])).seq }
        #expect(seqs == [1, 2, 3])
        bus.publish("player.controls", ["visible": true])
        #expect(lines(await queue.next()).count == 1, "outside a batch, one line a push")
    }

    @Test func aBatchThatDoesNotFitIsCountedWhole() async {
        let bus = EventBus(bootId: "b", timers: ManualScheduler())
        let queue = OutboundQueue(eventLimit: 2)
        bus.subscribe(connection: 1, queue: queue, prefixes: nil, role: .control, since: nil, sinceBootId: nil) { _ in Array("subscribed\n".utf8) }
        _ = await queue.next()
        bus.publish("player.controls", ["visible": true])
        bus.batch {
            bus.publish("player.controls", ["visible": false])
            bus.publish("player.controls", ["visible": true])
        }
        let got = lines(await queue.next())
        #expect(got.count == 2 && got.last == "lagged(2)", "\(got)")
    }
}
