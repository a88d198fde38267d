import FuzzSupport
@testable import SocketIO

/// Decodes the input as an Engine.IO packet (the first byte picks the frame kind and protocol
/// revision) and, for an open packet, its handshake; a decoded packet must encode back to the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEngineIO(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let opcode: WebSocketOpcode = data[0] & 1 == 0 ? .text : .binary
    let version: EngineIOVersion = data[0] & 2 == 0 ? .v4 : .v3
    let payload = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    guard let packet = try? EngineIOCodec.decode(opcode: opcode, payload: payload, version: version) else { return 0 }
    if case .open(let body) = packet {
        if let handshake = try? EngineIOHandshake(json: body) {
            fuzzCheck(!handshake.sid.isEmpty && handshake.pingInterval > .zero && handshake.pingTimeout > .zero, "an invalid handshake was accepted")
        }
    }
    let (encodedOpcode, encoded) = EngineIOCodec.encode(packet, version: version)
    fuzzCheck(encodedOpcode == opcode, "the packet encodes to another frame kind")
    switch packet {
    case .close, .upgrade, .noop:
        fuzzCheck(encoded.first == payload.first, "the packet type changed")
    default:
        fuzzCheck(encoded == payload, "the packet does not encode back to its input")
    }
    return 0
}
