import Foundation
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// The voice lab (tools/voice/lab.py, `python3 -m tools.voice lab`): two network namespaces
/// joined by a veth, Debian's Janus in one, aiortc friends in the other, where the daemon runs
/// too (`daemonLauncher`), and a proxy in front of Janus' WebSocket that a test can cut. Driven
/// by JSON lines: `command` sends one and waits for its reply; the room events the friends see
/// come as lines too (`waitForEvent`). Root only: `VoiceLab.unavailable` says why not.
final class VoiceLab: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = LogCollector()
    private let errors = LogCollector()
    private let nextID = Locked(1)
    /// The ready line: `janus`, `proxy`, `room`, `boxNamespace`, `serverAddress`, `boxAddress`, `friends`.
    private(set) var ready: JSONValue = .null

    /// Why the lab cannot run here (not root, no Janus), or nil.
    static var unavailable: String? {
        if geteuid() != 0 { return "voice rooms are tested in network namespaces, which need root (ip netns add)" }
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/janus") { return "Debian's janus package is not installed (scripts/setup)" }
        return nil
    }

    /// Starts a lab with `friends` (`NAME:HZ`, `NAME:HZ:ON/OFF`) in `room` and waits (bounded)
    /// for its ready line. `reclaimTimeout` is Janus' `reclaim_session_timeout` (0: a lost
    /// WebSocket ends its session); `apiSecret` Janus' `api_secret` (the friends send it).
    init(friends: [String], room: String = "1234", pin: String? = nil, reclaimTimeout: Int = 0, sessionTimeout: Int = 60,
         apiSecret: String? = nil) async throws
    {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        var arguments = ["python3", "-m", "tools.voice", "lab", "--room", room, "--session-timeout", String(sessionTimeout),
                         "--reclaim-timeout", String(reclaimTimeout)]
        for friend in friends { arguments += ["--friend", friend] }
        if let pin { arguments += ["--pin", pin] }
        if let apiSecret { arguments += ["--api-secret", apiSecret] }
        process.arguments = arguments
        process.currentDirectoryURL = BuiltProducts.packageRoot
        process.standardInput = input
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let (output, errors) = (self.output, self.errors)
        out.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            output.append(chunk)
            if chunk.isEmpty { handle.readabilityHandler = nil }
        }
        err.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            errors.append(chunk)
            if chunk.isEmpty { handle.readabilityHandler = nil }
        }
        try process.run()
        var first: JSONValue?
        _ = try await eventually(timeoutMs: 60_000, everyMs: 50) {
            first = lines.first { $0["janus"] != nil }
            return first != nil || !process.isRunning
        }
        guard let first else {
            process.terminate()
            throw TestFailure("the voice lab did not start:\n\(errors.text.suffix(3000))")
        }
        ready = first
    }

    deinit {
        // Its standard input closing ends it: it leaves the room, stops Janus and removes the namespaces.
        try? input.fileHandleForWriting.close()
    }

    /// Ends the lab and waits (bounded) until it removed everything it made.
    func stop() async {
        try? input.fileHandleForWriting.close()
        if (try? await process.exited(withinMs: 30_000)) != true { process.terminate() }
    }

    var janusURL: String { ready["janus"]?.stringValue ?? "" }
    /// Janus' WebSocket through the proxy that `cut` breaks: the daemon's `voiceUrl`.
    var proxyURL: String { ready["proxy"]?.stringValue ?? "" }
    var room: String { ready["room"]?.stringValue ?? "" }
    var boxNamespace: String { ready["boxNamespace"]?.stringValue ?? "" }
    var serverAddress: String { ready["serverAddress"]?.stringValue ?? "" }
    /// The friends of the ready line, by display name: their ids in the room.
    var friendIDs: [String: String] {
        var ids: [String: String] = [:]
        for friend in ready["friends"]?.arrayValue ?? [] {
            if let name = friend["display"]?.stringValue, let id = friend["id"] { ids[name] = Self.peerId(id) }
        }
        return ids
    }

    /// How the daemon is started in the box namespace (`DaemonProcess(launcher:)`).
    var daemonLauncher: [String] { ["/usr/sbin/ip", "netns", "exec", boxNamespace] }

    /// An id of Janus (a JSON number) as the daemon writes it (`peerId`, a string).
    static func peerId(_ value: JSONValue) -> String {
        if let number = value.doubleValue { return String(UInt64(number)) }
        return value.stringValue ?? value.jsonText
    }

    /// Every line the lab printed so far, parsed.
    var lines: [JSONValue] {
        output.text.split(separator: "\n").compactMap { try? JSONValue.parse(Array($0.utf8)) }
    }

    /// The lab's standard error so far (its failures, Janus' start).
    var log: String { errors.text }

    /// Sends a command (lab.py lists them) and waits (bounded) for its result.
    @discardableResult
    func command(_ name: String, _ fields: JSONObject = [:], timeoutMs: Int = 30_000) async throws -> JSONValue {
        let id = nextID.withLock { next -> Int in
            defer { next += 1 }
            return next
        }
        var members = fields
        members["id"] = .number(Double(id))
        members["do"] = .string(name)
        input.fileHandleForWriting.write(Data((JSONValue.object(members).jsonText + "\n").utf8))
        var reply: JSONValue?
        _ = try await eventually(timeoutMs: timeoutMs, everyMs: 20) {
            reply = lines.first { $0["reply"] == .number(Double(id)) }
            return reply != nil
        }
        guard let reply else { throw TestFailure("the voice lab did not answer \(name) within \(timeoutMs) ms\n\(log.suffix(2000))") }
        if let error = reply["error"]?.stringValue { throw TestFailure("the voice lab's \(name) failed: \(error)") }
        return reply["result"] ?? .null
    }

    /// How many event lines were printed so far: a mark for `waitForEvent(after:)`.
    var eventCount: Int { lines.filter { $0["event"] != nil }.count }

    /// Waits (bounded) for a room event a friend saw, after the first `after` events; returns its data.
    @discardableResult
    func waitForEvent(after mark: Int = 0, timeoutMs: Int = 15_000, what: String,
                      where predicate: (_ friend: String, _ event: JSONValue) -> Bool) async throws -> JSONValue {
        var found: JSONValue?
        _ = try await eventually(timeoutMs: timeoutMs, everyMs: 50) {
            let events = lines.filter { $0["event"] != nil }.dropFirst(mark)
            found = events.first { predicate($0["friend"]?.stringValue ?? "", $0["event"] ?? .null) }?["event"]
            return found != nil
        }
        guard let found else { throw TestFailure("no \(what) among the friends' events within \(timeoutMs) ms") }
        return found
    }

    // MARK: Checks made on the lab's side

    /// The server's participant list of the room: display names by id.
    func participants() async throws -> [String: String] {
        var list: [String: String] = [:]
        for entry in try await command("participants").arrayValue ?? [] {
            if let id = entry["id"] { list[Self.peerId(id)] = entry["display"]?.stringValue ?? "" }
        }
        return list
    }

    /// Each tone's level (dB of the window's power: about -3 for one of two equal tones, below
    /// -40 when absent) in the next `seconds` a friend hears.
    func heard(by friend: String, tones: [Int], seconds: Double = 1.5) async throws -> [Int: Double] {
        Self.levels(try await command("hear", ["friend": .string(friend), "tones": .array(tones.map { .number(Double($0)) }),
                                               "seconds": .number(seconds)]), tones)
    }

    /// Each tone's level in the next `seconds` written to the box's raw sink file.
    func heard(inFile path: String, tones: [Int], seconds: Double = 1.5) async throws -> [Int: Double] {
        Self.levels(try await command("hearFile", ["path": .string(path), "tones": .array(tones.map { .number(Double($0)) }),
                                                   "seconds": .number(seconds)]), tones)
    }

    private static func levels(_ result: JSONValue, _ tones: [Int]) -> [Int: Double] {
        var levels: [Int: Double] = [:]
        for tone in tones { levels[tone] = result[String(tone)]?.doubleValue ?? -200 }
        return levels
    }
}
