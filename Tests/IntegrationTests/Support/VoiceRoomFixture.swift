import Foundation
import IPCProtocol
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// A voice room against real peers: the voice lab (Janus and aiortc friends in namespaces it
/// made) and the real daemon in the box's namespace, its `voiceUrl` the lab's cuttable proxy,
/// its microphone a test tone (GStreamer's `audiotestsrc`) and its speaker a raw file the lab
/// analyses. `player` is subscribed to `voice.` events; `status()` is `daemon.status` on a
/// connection of its own, bounded, which each test calls between its steps.
final class VoiceRoomFixture: @unchecked Sendable {
    /// The box's microphone tone, and the friends' the tests use.
    static let boxTone = 1100
    /// dB of a window's power within 20 Hz of a tone (tools/voice/audio.py): present above,
    /// absent below.
    static let present = -15.0
    static let absent = -40.0

    let lab: VoiceLab
    let daemon: DaemonProcess
    let player: DaemonConnection
    private let observer: DaemonConnection
    /// What the box hears (raw S16LE mono 48 kHz).
    let heardPath: String

    /// A daemon in the box's namespace; `source` replaces the test tone, `config` adds to the
    /// configuration file (which alone may set `voiceSource` and `voiceSink`; a null takes a key
    /// out of it).
    init(lab: VoiceLab, source: String? = nil, config extra: JSONObject = [:]) async throws {
        self.lab = lab
        let directory = try TemporaryDirectory()
        heardPath = directory.path + "/heard.raw"
        var config: JSONObject = [
            "voiceUrl": .string(lab.proxyURL),
            "voiceSource": .string(source ?? "audiotestsrc is-live=true wave=sine freq=\(Self.boxTone) volume=0.3"),
            "voiceSink": .string("audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=48000,channels=1 ! filesink location=\(heardPath)"),
            "voiceEchoCancel": false,
            "reconnect": ["baseMs": 200, "capMs": 1000],
        ]
        for (key, value) in extra { config[key] = value.isNull ? nil : value }
        daemon = try await DaemonProcess(config: .object(config), directory: directory, launcher: lab.daemonLauncher)
        player = try await daemon.client()
        observer = try await daemon.client()
        try await player.subscribe(["voice."])
    }

    /// `voice.join` of the lab's room as "Box"; the result.
    @discardableResult
    func join(_ extra: JSONObject = [:], timeoutMs: Int = 20_000) async throws -> JSONValue {
        var params: JSONObject = ["room": .string(lab.room), "display": "Box", "timeoutMs": .number(Double(timeoutMs - 5000))]
        for (key, value) in extra { params[key] = value }
        return try await player.call("voice.join", .object(params), timeoutMs: timeoutMs)
    }

    /// The error a method got.
    func error(_ method: String, _ params: JSONValue?, timeoutMs: Int = 20_000) async throws -> RPCError {
        do {
            let result = try await player.call(method, params, timeoutMs: timeoutMs)
            throw TestFailure("\(method) succeeded: \(result)")
        } catch .rpc(let error) as IPCClientError {
            return error
        }
    }

    /// `daemon.status`'s `voice`, which the daemon must answer within a second whatever the room
    /// is doing.
    func status() async throws -> JSONValue {
        try await observer.call("daemon.status", timeoutMs: 1000)["voice"] ?? .null
    }

    /// The ids in `daemon.status`'s participants (this box first).
    func statusParticipants() async throws -> [String] {
        try await status()["participants"]?.arrayValue?.compactMap { $0["peerId"]?.stringValue } ?? []
    }

    /// The media process the daemon runs now (waits, bounded, for it).
    func mediaProcess(timeoutMs: Int = 10_000) async throws -> Int32 {
        var found: Int32?
        _ = try await eventually(timeoutMs: timeoutMs) {
            found = daemon.children.first
            return found != nil
        }
        guard let found else { throw TestFailure("the daemon runs no media process") }
        return found
    }

    /// `/proc/PID/maps` of a process, read to its end (a proc file has no size to read up to).
    static func memoryMaps(of pid: Int32) throws -> String {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { throw TestFailure("cannot read /proc/\(pid)/maps") }
        defer { try? file.close() }
        return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// Measures with `measure` (one window each time) until `present` tones are heard and
    /// `absent` ones not, `attempts` windows at most; returns the last levels, for the test to
    /// check and show.
    func hearing(present: [Int], absent: [Int], attempts: Int = 8, _ measure: () async throws -> [Int: Double])
        async throws -> [Int: Double]
    {
        var levels: [Int: Double] = [:]
        for _ in 0..<attempts {
            levels = try await measure()
            if Self.hears(levels, present: present, absent: absent) { break }
        }
        return levels
    }

    /// Whether `levels` has `present` above and `absent` below their thresholds.
    static func hears(_ levels: [Int: Double], present: [Int], absent: [Int]) -> Bool {
        present.allSatisfy { (levels[$0] ?? -200) > Self.present } && absent.allSatisfy { (levels[$0] ?? 0) < Self.absent }
    }

    /// Stops the daemon (gracefully, bounded), then the lab.
    func stop() async {
        if daemon.process.isRunning { _ = try? await daemon.stop() }
        await lab.stop()
    }
}

/// Runs `body` with a lab of `friends` and a daemon in it, and stops both whatever happens;
/// skipped, with the reason, where the lab cannot run.
func withVoiceRoom(friends: [String], pin: String? = nil, reclaimTimeout: Int = 0, apiSecret: String? = nil, source: String? = nil,
                   config: JSONObject = [:], _ body: (VoiceRoomFixture) async throws -> Void) async throws {
    let lab = try await VoiceLab(friends: friends, room: String(Int.random(in: 100_000...999_999)), pin: pin,
                                 reclaimTimeout: reclaimTimeout, apiSecret: apiSecret)
    let fixture: VoiceRoomFixture
    do {
        fixture = try await VoiceRoomFixture(lab: lab, source: source, config: config)
    } catch {
        await lab.stop()
        throw error
    }
    do {
        try await body(fixture)
    } catch {
        // What the daemon said goes with the failure: a voice room's story is in its log.
        let said = fixture.daemon.stderr.split(separator: "\n", omittingEmptySubsequences: false).suffix(150)
        await fixture.stop()
        throw TestFailure("\(error)\n--- the daemon's log, its last \(said.count) lines ---\n\(said.joined(separator: "\n"))")
    }
    await fixture.stop()
}
