import Foundation
import IPCProtocol
import JSONValue
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A scripted stand-in for the daemon's voice room, for the client's voice calls: a JSON-lines
/// Unix-socket server that speaks exactly docs/ipc.md's exchanges for `daemon.hello`,
/// `daemon.status` (with `voice`), `events.subscribe`, `voice.join`, `voice.leave` and
/// `voice.mute`, answers what the test scripted, records every request and sends the events the
/// test emits. It stands in for a daemon with a voice manager and a voice server; it makes up no
/// method, event or member the contract does not name. Each connection is served on a thread of
/// its own with blocking reads; `stop()` shuts every socket, which ends them.
final class ScriptedVoiceDaemon: Sendable {
    /// What a scripted method answers.
    enum Reply: Sendable {
        case result(JSONValue)
        /// One of the daemon's own errors (code -32000, `data.name`).
        case daemonError(name: String, message: String, data: JSONObject = [:])
    }

    private struct State {
        var replies: [String: Reply] = [:]
        var voice: JSONValue = .null
        var requests: [(method: String, params: JSONValue)] = []
        var subscribers: [Int32] = []
        var connections: [Int32] = []
        var seq = 40
    }

    static let bootId = "5c2f0a9e1b7d4c3a"
    let path: String
    private let listener: Int32
    private let state = Mutex(State())

    init(replies: [String: Reply] = [:], voice: JSONValue = .null) throws {
        path = "/tmp/icv-\(UInt32.random(in: 0 ... .max)).sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (offset, byte) in path.utf8.enumerated() { raw[offset] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 8) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        state.withLock {
            $0.replies = replies
            $0.voice = voice
        }
        Thread.detachNewThread { [self] in acceptConnections() }
    }

    var requests: [(method: String, params: JSONValue)] { state.withLock { $0.requests } }

    func setVoice(_ voice: JSONValue) { state.withLock { $0.voice = voice } }

    /// An event to every subscriber, as the daemon sends it.
    func emit(_ type: String, _ data: JSONValue) {
        let (line, subscribers) = state.withLock { state in
            state.seq += 1
            let event = EventEnvelope(bootId: Self.bootId, seq: state.seq, type: type, time: "2026-12-01T23:00:00.000Z", data: data)
            return (event.line(), state.subscribers)
        }
        for fd in subscribers { writeAll(fd, line) }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in state.withLock({ $0.connections }) { shutdown(fd, Int32(SHUT_RDWR)) }
        unlink(path)
    }

    private func acceptConnections() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            state.withLock { $0.connections.append(fd) }
            Thread.detachNewThread { [self] in serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[0 ..< count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(pending[..<newline])
                pending.removeSubrange(...newline)
                if let reply = answer(line, from: fd) { writeAll(fd, reply) }
            }
        }
        state.withLock { state in
            state.subscribers.removeAll { $0 == fd }
            state.connections.removeAll { $0 == fd }
        }
        close(fd)
    }

    private func answer(_ line: [UInt8], from fd: Int32) -> [UInt8]? {
        guard let message = try? JSONValue.parse(line), let method = message["method"]?.stringValue else { return nil }
        let params = message["params"] ?? .object([:])
        let reply: JSONValue = state.withLock { state in
            state.requests.append((method, params))
            let status: JSONValue = ["bootId": .string(Self.bootId), "connection": ["state": "idle"], "room": .null,
                                     "session": ["loggedIn": false], "overlays": [], "predict": [], "voice": state.voice]
            switch method {
            case "daemon.hello":
                return ["result": ["daemon": "interactived", "version": "scripted", "protocol": 1, "bootId": .string(Self.bootId),
                                   "role": "control", "capabilities": []]]
            case "daemon.status":
                return ["result": status]
            case "events.subscribe":
                state.subscribers.append(fd)
                return ["result": ["bootId": .string(Self.bootId), "seq": .number(Double(state.seq)), "snapshot": status]]
            default:
                switch state.replies[method] {
                case .result(let result)?:
                    return ["result": result]
                case .daemonError(let name, let text, var data)?:
                    data["name"] = .string(name)
                    return ["error": ["code": -32000, "message": .string(text), "data": .object(data)]]
                case nil:
                    return ["error": ["code": -32601, "message": .string("method not found: \(method)")]]
                }
            }
        }
        guard let id = message["id"], var members = reply.objectValue else { return nil }
        members["jsonrpc"] = "2.0"
        members["id"] = id
        return JSONValue.object(members).serialized() + [UInt8(ascii: "\n")]
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }
}
