import Foundation
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/ipc.md "Tracking across a restart": an ack decided more than 500 ms before a kill -9 is
/// delivered after the restart, and one the server acknowledged more than 500 ms before it is not
/// sent again.
/// Checked by killing the daemon at random moments while overlays arrive, replace one another
/// and are rendered, with a backend that acknowledges at once.
@Suite(.serialized) struct KillAtRandomMomentsTests {
    /// The window of the guarantee, in milliseconds: the store's delay (50 ms) and what may hold
    /// its thread (a WAL checkpoint, a busy CPU), with a wide margin for a loaded CI machine.
    static let window: Int64 = 500

    /// What the player saw of one overlay, in wall-clock milliseconds (the backend's clock).
    struct Seen: Sendable {
        let trackingId: String
        /// The round it was shown in: the kill that ended that round is the one it is judged by.
        let round: Int
        /// When `overlay.show` arrived: its `received` was decided before.
        let shownAt: Int64
        /// When the daemon answered `overlay.rendered`: its `rendered` was decided before.
        var renderedAt: Int64?
    }

    enum RoundOutcome: Sendable {
        case traffic([Seen])
        case killed(at: Int64)
    }

    static func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Shows overlays one after another (each replaces the one before) and renders every other
    /// one, until the daemon is gone; returns what the player saw.
    static func traffic(_ live: LiveFixture, round: Int) async -> [Seen] {
        var seen: [Seen] = []
        for number in 0... {
            let trackingId = "kill-\(round)-\(number)"
            do {
                let overlayId = try await live.show(live.backend.quiz("tl-\(trackingId)"), trackingId: trackingId).overlayId
                seen.append(Seen(trackingId: trackingId, round: round, shownAt: nowMs()))
                guard number % 2 == 0 else { continue }
                _ = try await live.player.call("overlay.attached", ["overlayId": .string(overlayId)], timeoutMs: 2_000)
                _ = try await live.player.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded"], timeoutMs: 2_000)
                seen[seen.count - 1].renderedAt = nowMs()
            } catch {
                return seen  // The daemon was killed.
            }
        }
        return seen
    }

    @Test func noAckIsLostOrSentTwiceOutsideTheWindow() async throws {
        var generator = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64(UInt32.max), using: &generator)
        var random = SeededRandom(seed: seed)
        let backend = try await ReferenceBackend()
        let directory = try TemporaryDirectory()
        var seen: [Seen] = []
        var kills: [Int64] = []
        for round in 0..<5 {
            let live = try await LiveFixture(directory: directory, backend: backend)
            let delayMs = Int.random(in: 150...900, using: &random)
            let (shown, killedAt) = await withTaskGroup(of: RoundOutcome.self) { group -> ([Seen], Int64) in
                group.addTask { .traffic(await Self.traffic(live, round: round)) }
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(delayMs))
                    let at = Self.nowMs()
                    live.daemon.signal(SIGKILL)
                    return .killed(at: at)
                }
                var shown: [Seen] = []
                var killedAt: Int64 = 0
                for await outcome in group {
                    switch outcome {
                    case .traffic(let seen): shown = seen
                    case .killed(let at): killedAt = at
                    }
                }
                return (shown, killedAt)
            }
            kills.append(killedAt)
            _ = try await live.daemon.waitForExit()
            seen += shown
        }
        // The last start delivers what the kills left.
        let last = try await LiveFixture(directory: directory, backend: backend)
        try await last.waitForAcksDelivered(timeoutMs: 20_000)

        let acks = try await backend.records("acks").filter { $0["trackingId"]?.stringValue?.hasPrefix("kill-") == true }
        let byKey = Dictionary(grouping: acks) { "\($0["trackingId"]?.stringValue ?? "")/\($0["stage"]?.stringValue ?? "")" }
        // A moment of round `round` is settled when it is more than the window before that
        // round's kill. (A later moment is not: the player may see an overlay after the kill was
        // sent, its event already on the way; and no later kill can undo what a round settled.)
        func settled(_ time: Int64, round: Int) -> Bool { time < kills[round] - Self.window }
        // A second copy of an ack is allowed when the first reached the backend within the window
        // of a kill: before it, or after it (written before the kill, read by the backend after).
        func nearAKill(_ time: Int64) -> Bool { kills.contains { abs(time - $0) <= Self.window } }
        let context = "seed \(seed), kills at \(kills), \(seen.count) overlays shown, \(acks.count) acks"
        #expect(seen.count >= 10, "too little traffic to mean anything: \(context)")
        for overlay in seen where settled(overlay.shownAt, round: overlay.round) {
            #expect(byKey["\(overlay.trackingId)/received"] != nil, "received of \(overlay.trackingId) lost: \(context)")
            // Shown, it was rendered, replaced or closed by the restart: its rendered is decided.
            #expect(byKey["\(overlay.trackingId)/rendered"] != nil, "rendered of \(overlay.trackingId) lost: \(context)")
            if let renderedAt = overlay.renderedAt, settled(renderedAt, round: overlay.round) {
                #expect(byKey["\(overlay.trackingId)/rendered"]?.first?["status"] == "success",
                        "the rendered report of \(overlay.trackingId) lost: \(context)")
            }
        }
        for (key, copies) in byKey where copies.count > 1 {
            let first = copies[0]["time"]?.doubleValue.map { Int64($0) } ?? 0
            #expect(nearAKill(first), "\(key) sent \(copies.count) times, first at \(first): \(context)")
        }
    }
}

/// A small seeded generator (SplitMix64), so that a failing run names the moments it tried.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
