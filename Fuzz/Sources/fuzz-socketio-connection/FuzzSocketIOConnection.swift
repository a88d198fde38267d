import FuzzSupport
@testable import SocketIO

/// Feeds the input, in chunks, to one Socket.IO connection (WebSocket, Engine.IO and Socket.IO
/// machines stacked) as the server's bytes after a valid upgrade answer and open packet, the
/// clock moving 100 ms per chunk (bit 7 of the first byte picks Engine.IO 3 or 4). Nothing may
/// trap; once the connection has ended it does nothing more; an event never exceeds the limits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIOConnection(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let version: EngineIOVersion = data[0] & 0x80 == 0 ? .v4 : .v3
    var now = ContinuousClock.now
    let limit = 4096
    var connection = SocketIOConnectionMachine(namespace: "/", version: version, auth: nil, epoch: 1, maxMessageBytes: limit, seed: 1, now: now)
    let origin = Endpoint(secure: false, host: "127.0.0.1", port: 1, path: "/", query: nil)
    guard let request = try? connection.upgradeRequest(origin: origin, path: "/socket.io/", query: [], headers: []) else {
        fuzzCheck(false, "no upgrade request")
        return 0
    }
    let text = String(decoding: request, as: UTF8.self)
    let key = text.split(separator: "\r\n").first { $0.hasPrefix("Sec-WebSocket-Key: ") }?.dropFirst(19) ?? ""
    let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: \(Encoding.webSocketAccept(for: String(key)))\r\n\r\n"
    let open = Array(#"0{"sid":"s","upgrades":[],"pingInterval":1000,"pingTimeout":500,"maxPayload":100000}"#.utf8)
    var ended = isEnded(connection.receive(Array(answer.utf8) + [0x81, UInt8(open.count)] + open, now: now))
    fuzzCheck(!ended, "a valid opening ended the connection")
    for chunk in fuzzChunks(data, size) {
        now += .milliseconds(100)
        let actions = connection.receive(chunk, now: now) + connection.tick(now: now)
        fuzzCheck(!ended || actions.isEmpty, "the connection acted after it ended")
        for case .event(let event) in actions {
            fuzzCheck((event.byteCount ?? 0) >= 0 && event.attachments.reduce(0) { $0 + $1.count } <= limit, "an event beyond the limits")
        }
        ended = ended || isEnded(actions)
    }
    return 0
}

private func isEnded(_ actions: [SocketIOConnectionMachine.Action]) -> Bool {
    actions.contains { if case .ended = $0 { return true } else { return false } }
}
