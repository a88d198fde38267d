#if DEBUG || IPC_BENCH_TESTABLE
import Foundation
@testable import InteractiveDaemon
import JSONValue

/// `ipc-bench store-cost`: what the emit-ack tracking of one live overlay costs in the store.
///
/// Replays, on the daemon's real `Store` (SQLite, WAL, its own queue), the writes that
/// TrackingService makes for one tracked overlay that is shown and then replaced:
/// the ack `received` (session row kept), the ack `rendered` (session row deleted), then the
/// deletion of both once the server acked them, each in a transaction of its own (the daemon
/// puts writes that queue up meanwhile into one transaction). Each call is awaited
/// from a task, as the daemon's actors do, so the time includes the hop to the store's queue.
/// `overlay.show` is published only after the first two have returned (OverlayManager.offer →
/// trackArrival, and the replaced overlay's `cancelled` in `show`).
enum StoreCost {
    static func run(_ options: Options) async throws {
        let directories = options.string("dirs", default: "/tmp/ipc-bench-store").split(separator: ",").map(String.init)
        let count = try options.int("count", default: 2000)
        guard count >= 10, count <= 100_000 else { throw BenchError("count 10…100000") }
        for directory in directories {
            try? FileManager.default.removeItem(atPath: directory)
            let log = Logger(target: .stderr, minimumPriority: .warning, environment: [:])
            let store = try Store(directory: directory, log: log)
            let context = ClientContextBase(os: "Debian GNU/Linux 12 (bookworm)")
            var saveReceived: [Double] = []
            var saveRendered: [Double] = []
            var deletes: [Double] = []
            var perOverlay: [Double] = []
            for number in 0..<count {
                let trackingId = "trk-bench-\(number)"
                let session: JSONValue = ["timelineId": .string("bench-\(number)"), "overlayType": "minigame",
                                          "receivedAt": .number(Double(Timestamp.nowMs())), "sent": ["received"]]
                let received = PendingAck(trackingId: trackingId, stage: .received, payload: PendingAck.payload(
                    trackingId: trackingId, stage: .received, deviceId: "0123456789abcdef0123456789abcdef",
                    clientContext: context.clientContext(["receivedAt": .number(Double(Timestamp.nowMs()))])),
                    created: Timestamp.nowMs())
                let rendered = PendingAck(trackingId: trackingId, stage: .rendered, payload: PendingAck.payload(
                    trackingId: trackingId, stage: .rendered, deviceId: "0123456789abcdef0123456789abcdef",
                    clientContext: context.clientContext(["status": "cancelled", "cancelReason": "replaced_by_new_overlay"])),
                    created: Timestamp.nowMs())
                let t0 = nowNs()
                try await apply(store, .ack(received, sessionState: session, at: Timestamp.nowMs()))
                let t1 = nowNs()
                try await apply(store, .ack(rendered, sessionState: .none, at: Timestamp.nowMs()))
                let t2 = nowNs()
                try await apply(store, .deleteAck(received))
                try await apply(store, .deleteAck(rendered))
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

    /// One write in a transaction of its own: what the daemon does when writes come one at a time.
    private static func apply(_ store: Store, _ write: TrackingWrite) async throws {
        if let failure = await store.apply([write]).first, let failure { throw failure }
    }
}
#endif
