import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

@Suite struct ReplayRingTests {
    private func entry(_ seq: Int, _ type: String = "room.state", bytes: Int = 10) -> ReplayRing.Entry {
        ReplayRing.Entry(seq: seq, type: type, line: [UInt8](repeating: 0x20, count: bytes))
    }

    @Test func keepsTheNewestWithinCountAndBytes() {
        var ring = ReplayRing(capacity: 4, byteCapacity: 35, minimumCount: 1)
        for seq in 1...6 { ring.append(entry(seq)) }
        #expect(ring.count == 3)
        #expect(ring.oldestSeq == 4)
        #expect(ring.byteCount == 30)
        ring.append(entry(7, bytes: 100))
        #expect(ring.count == 1, "one entry over the byte capacity is still kept")
        #expect(ring.oldestSeq == 7)
        var kept = ReplayRing(capacity: 8, byteCapacity: 35, minimumCount: 5)
        for seq in 1...8 { kept.append(entry(seq)) }
        #expect(kept.count == 5, "the byte capacity never leaves fewer than the minimum")
    }

    @Test func replayTakesTheNewestThatFitAndCountsTheRest() {
        var ring = ReplayRing(capacity: 100, byteCapacity: 10_000)
        for seq in 1...10 { ring.append(entry(seq, seq % 2 == 0 ? "overlay.show" : "room.state")) }
        let all = ring.entries(after: 3, byteLimit: 1_000) { _ in true }
        #expect(all.entries.map(\.seq) == [4, 5, 6, 7, 8, 9, 10])
        #expect(all.skipped == 0)
        let limited = ring.entries(after: 0, byteLimit: 25) { $0.type == "overlay.show" }
        #expect(limited.entries.map(\.seq) == [8, 10])
        #expect(limited.skipped == 3)
    }

    @Test func manyAppendsKeepMemoryBounded() {
        var ring = ReplayRing(capacity: 8, byteCapacity: 1_000, minimumCount: 8)
        for seq in 1...100_000 { ring.append(entry(seq)) }
        #expect(ring.count == 8)
        #expect(ring.oldestSeq == 99_993)
    }

    /// The byte bound counts what the ring holds: an entry that left it holds nothing more (it
    /// used to stay in the array's dead prefix until 1024 had left: twice the bound's bytes).
    @Test func anEntryThatLeftTheRingNoLongerHoldsItsLine() {
        var ring = ReplayRing(capacity: 2, byteCapacity: 1_000, minimumCount: 1)
        var line = [UInt8](repeating: 0x20, count: 100)
        let buffer = line.withUnsafeBufferPointer { $0.baseAddress }
        ring.append(ReplayRing.Entry(seq: 1, type: "overlay.show", line: line))
        for seq in 2...3 { ring.append(entry(seq)) }
        #expect(ring.oldestSeq == 2)
        line[0] = 0x21  // copy-on-write: copies only while the ring still shares the buffer
        #expect(line.withUnsafeBufferPointer { $0.baseAddress } == buffer, "the ring still holds a line it dropped")
    }
}

@Suite struct ConnectionAdmissionTests {
    @Test func observersCannotTakeTheSlotsKeptForControl() {
        var admission = ConnectionAdmission(maxClients: 16)
        #expect(admission.controlReserve == 2)
        for uid in 1000..<1014 { #expect(admission.admit(role: .observer, uid: UInt32(uid)) == nil) }
        #expect(admission.admit(role: .observer, uid: 2000) == .reservedForControl)
        #expect(admission.admit(role: .control, uid: 0) == nil)
        #expect(admission.admit(role: .control, uid: 1001) == nil)
        #expect(admission.admit(role: .control, uid: 0) == .full)
        admission.leave(uid: 1000, role: .observer)
        #expect(admission.admit(role: .control, uid: 0) == nil)
    }

    @Test func oneUIDHasAtMostItsShare() {
        var admission = ConnectionAdmission(maxClients: 1024)
        for _ in 0..<64 { #expect(admission.admit(role: .observer, uid: 65534) == nil) }
        #expect(admission.admit(role: .observer, uid: 65534) == .tooManyFromUID(limit: 64))
        #expect(admission.admit(role: .observer, uid: 1000) == nil, "another user is not affected")
        #expect(admission.admit(role: .control, uid: 0) == nil, "root has no per-uid limit")
        admission.leave(uid: 65534, role: .observer)
        #expect(admission.admit(role: .observer, uid: 65534) == nil)
        #expect(admission.total == 66)
    }

    /// 992 observer connections from 16 uids took the daemon to 66 MiB (16 KiB each when idle,
    /// more when busy): observers hold 128 connections at most, whatever their uids.
    @Test func observersTogetherHaveAtMostTheirShare() {
        var admission = ConnectionAdmission(maxClients: 1024)
        for uid in 65500..<65502 {
            for _ in 0..<64 { #expect(admission.admit(role: .observer, uid: UInt32(uid)) == nil) }
        }
        #expect(admission.admit(role: .observer, uid: 65502) == .tooManyObservers(limit: 128))
        #expect(admission.admit(role: .control, uid: 0) == nil, "players are not affected")
        admission.leave(uid: 65500, role: .observer)
        admission.leave(uid: 0, role: .control)
        #expect(admission.admit(role: .observer, uid: 65502) == nil)
        #expect(ConnectionAdmission(maxClients: 16).observerLimit == 14)
    }
}

@Suite struct PeerTextTests {
    @Test func controlCharactersAreEscapedAndLongTextCut() {
        #expect(PeerText.clipped("a\nb\r\u{1B}[31m\u{0}") == #"a\nb\r\u{1B}[31m\u{0}"#)
        #expect(PeerText.clipped(String(repeating: "x", count: 20), limit: 5) == "xxxxx… (15 more characters)")
        #expect(PeerText.clipped("plain text") == "plain text")
        #expect("tok\rX".containsControlCharacters)
        #expect("line\u{2028}sep".containsControlCharacters)
        #expect(!"ok é 😀".containsControlCharacters)
    }

    @Test func printableASCIIIsToldInPlaceAndByteByByte() {
        for (text, printable) in [("plain text ~", true), ("", true), ("tab\there", false), ("del\u{7F}", false), ("é", false)] {
            #expect(PeerText.isPrintableASCII(text.utf8) == printable, "\(text)")
            #expect(PeerText.isPrintableASCII(text.utf8.lazy.map { $0 }) == printable, "\(text), not contiguous")
            #expect(PeerText.isPrintableASCII(text.dropFirst(0).utf8) == printable, "\(text), a substring")
        }
        #expect(PeerText.clipped("é x") == "é x")
    }

    @Test func onlyHTTPURLsReachPlayers() {
        #expect(PlayerURL.isLoadable("https://cdn.example/q.html?id=1"))
        #expect(PlayerURL.isLoadable("HTTP://127.0.0.1:8080/x"))
        for url in ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,<b>x</b>", "chrome://settings",
                    "https://cdn/\u{0}x", "https://cdn/a b", "//cdn/x", "https://" + String(repeating: "a", count: 5000)] {
            #expect(!PlayerURL.isLoadable(url), "\(url.prefix(40))")
        }
    }
}

@Suite struct ParamsTests {
    @Test func controlCharactersInStringsAreRefused() throws {
        let params = try ParamReader(["token": "tokC\rX-Injected-Token: yes", "userId": "u1", "types": ["a\n"]])
        #expect(throws: RPCError.self) { try params.string("token") }
        #expect(throws: RPCError.self) { try params.optionalStringArray("types") }
        #expect(try params.string("userId") == "u1")
    }

    @Test func configBooleansAreStrictAndStringsRefuseNUL() throws {
        let insecure = try #require(ConfigKeys.byName["insecureTLS"])
        #expect(throws: ConfigError.self) { try insecure.normalize(1.5) }
        #expect(throws: ConfigError.self) { try insecure.normalize("true") }
        #expect(try insecure.normalize(true) == true)
        let tenant = try #require(ConfigKeys.byName["tenant"])
        #expect(throws: ConfigError.self) { try tenant.normalize("onlive\u{0}v2") }
    }

    @Test func overlayDurationsAreClamped() {
        #expect(IncomingOverlay.clampedDuration(30) == 30)
        #expect(IncomingOverlay.clampedDuration(-5) == 0)
        #expect(IncomingOverlay.clampedDuration(9.3e18) == IncomingOverlay.maxDurationSec)
        #expect(IncomingOverlay.clampedDuration(.infinity) == 0)
        #expect(IncomingOverlay.clampedDuration(.nan) == 0)
    }
}

@Suite struct RequestRateTests {
    @Test func aBurstGoesThenRequestsArePaced() {
        var rate = RequestRate(perSecond: 10, burst: 3)
        let start = ContinuousClock.now
        #expect(rate.take(at: start) == .zero)
        #expect(rate.take(at: start) == .zero)
        #expect(rate.take(at: start) == .zero)
        #expect(rate.take(at: start) == .milliseconds(100))
        #expect(rate.take(at: start) == .milliseconds(200))
        // A second later the bucket has refilled up to the burst, not beyond.
        let later = start + .seconds(5)
        for _ in 0..<3 { #expect(rate.take(at: later) == .zero) }
        #expect(rate.take(at: later) > .zero)
    }
}

@Suite struct RepeatedLogLimitTests {
    @Test func oneLinePerIntervalWithTheCountOfTheOthers() {
        var limit = RepeatedLogLimit(interval: .seconds(10))
        let start = ContinuousClock.now
        #expect(limit.record(at: start) == 0)
        #expect(limit.record(at: start + .seconds(1)) == nil)
        #expect(limit.record(at: start + .seconds(9)) == nil)
        #expect(limit.record(at: start + .seconds(10)) == 2)
        #expect(limit.record(at: start + .seconds(11)) == nil)
        #expect(limit.record(at: start + .seconds(30)) == 1)
        #expect(limit.record(at: start + .seconds(45)) == 0)
    }
}
