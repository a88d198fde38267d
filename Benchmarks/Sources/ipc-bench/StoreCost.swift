#if DEBUG || IPC_BENCH_TESTABLE
import Foundation
@testable import InteractiveDaemon
import JSONValue
import Runtime

/// `ipc-bench store-cost`: what the emit-ack tracking of one live overlay costs in the store
/// when the server does not acknowledge its acks within the tracker's store delay (a slow server,
/// or the connection down). An overlay whose acks are acknowledged at once costs the store
/// nothing (TrackingBook); this is the path the store is for.
///
/// Replays, on the daemon's real `Store` (SQLite, WAL, its own queue), the writes the tracker
/// makes then for one tracked overlay that is shown and then replaced: the ack `received` with
/// its session's row, the ack `rendered` with the row's end, then the deletion of both acks once
/// the server acked them, each in a transaction of its own (the tracker puts writes that are due
/// together into one transaction). Each call is awaited from the loop, as the tracker's writes
/// are, so the time includes the hop to the store's queue and back.
enum StoreCost {
    @LoopActor
    static func run(_ options: Options) async throws {
        let directories = options.string("dirs", default: "/tmp/ipc-bench-store").split(separator: ",").map(String.init)
        let count = try options.int("count", default: 2000)
        guard count >= 10, count <= 100_000 else { throw BenchError("count 10…100000") }
        for directory in directories {
            try? FileManager.default.removeItem(atPath: directory)
            let log = Logger(target: .stderr, minimumPriority: .warning, environment: [:])
            let store = try Store(directory: directory, log: log)
            var saveReceived: [Double] = []
            var saveRendered: [Double] = []
            var deletes: [Double] = []
            var perOverlay: [Double] = []
            for number in 0..<count {
                let trackingId = "trk-bench-\(number)"
                let session: JSONValue = ["timelineId": .string("bench-\(number)"), "overlayType": "minigame",
                                          "receivedAt": .number(Double(Timestamp.nowMs())), "sent": ["received"]]
                let received = PendingAck(trackingId: trackingId, stage: .received,
                                          payload: Self.payload(trackingId, stage: "received"), created: Timestamp.nowMs())
                let rendered = PendingAck(trackingId: trackingId, stage: .rendered,
                                          payload: Self.payload(trackingId, stage: "rendered"), created: Timestamp.nowMs())
                let t0 = nowNs()
                try await apply(store, [.ack(received), .session(trackingId, state: session, at: Timestamp.nowMs())])
                let t1 = nowNs()
                try await apply(store, [.ack(rendered), .session(trackingId, state: nil, at: Timestamp.nowMs())])
                let t2 = nowNs()
                try await apply(store, [.deleteAck(received)])
                try await apply(store, [.deleteAck(rendered)])
                let t3 = nowNs()
                saveReceived.append(Double(t1 - t0) / 1000)
                saveRendered.append(Double(t2 - t1) / 1000)
                deletes.append(Double(t3 - t2) / 2000)
                perOverlay.append(Double(t3 - t0) / 1000)
            }
            func text(_ values: [Double]) -> String {
                let sorted = values.sorted()
                return "median \(format(percentile(sorted, 50), 0)) µs, p99 \(format(percentile(sorted, 99), 0)) µs"
            }
            let median = percentile(perOverlay.sorted(), 50)
            printLine("store-cost in \(directory) (\(count) overlays): ack received \(text(saveReceived)); "
                + "ack rendered \(text(saveRendered)); ack deleted \(text(deletes)); "
                + "all four per tracked overlay \(text(perOverlay)) → one store queue saturates near "
                + "\(format(1e6 / median, 0)) tracked overlays/s")
            printLine("figure store.per_overlay_us \(format(median, 0))")
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Writes in a transaction of their own: what the tracker does when they come one at a time.
    private static func apply(_ store: Store, _ writes: [TrackingWrite]) async throws {
        for failure in await store.apply(writes) { if let failure { throw failure } }
    }

    /// An `emit-ack` payload of the size the tracker writes (about 600 bytes).
    private static func payload(_ trackingId: String, stage: String) -> JSONValue {
        ["trackingId": .string(trackingId), "event": "overlay", "stage": .string(stage),
         "deviceId": "0123456789abcdef0123456789abcdef",
         "clientContext": ["sdkVersion": "0.1.0", "os": "Debian GNU/Linux 12 (bookworm)", "platform": "linux",
                           "deviceClass": "settopbox", "profile": "overlay.legacyIframe", "transportMode": "legacyIframe",
                           "viewportWidth": 1920, "viewportHeight": 1080, "status": "cancelled",
                           "receiveLatencyMs": 12, "ackLatencyMs": 3,
                           "timeline": ["received": .number(Double(Timestamp.nowMs())), "attached": nil, "renderStart": nil,
                                        "loadComplete": nil, "readyReceived": nil, "ackSent": .number(Double(Timestamp.nowMs()))],
                           "custom": ["cancelReason": "replaced_by_new_overlay"]]]
    }
}
#endif
