import FuzzSupport
@testable import SocketIO

/// Feeds the input in chunks to the frame decoder (a 4 KiB payload limit) and takes every frame
/// it yields; a decoded frame must re-encode (masked, as a client would) to a frame of its size.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var decoder = WebSocketFrameDecoder(maxPayload: 4096)
    for chunk in fuzzChunks(data, size) {
        decoder.append(chunk)
        while true {
            let frame: WebSocketFrame?
            do {
                frame = try decoder.next()
            } catch {
                fuzzCheck([1002, 1009].contains(error.code), "unexpected close code \(error.code)")
                return 0
            }
            guard let frame else { break }
            fuzzCheck(frame.payload.count <= 4096, "a frame over the limit")
            fuzzCheck(!frame.opcode.isControl || (frame.fin && frame.payload.count <= 125), "an invalid control frame")
            var encoded: [UInt8] = []
            WebSocketFrameEncoder.encode(opcode: frame.opcode, payload: frame.payload, fin: frame.fin, mask: 0x1234_5678, into: &encoded)
            let header = frame.payload.count < 126 ? 6 : frame.payload.count <= 0xFFFF ? 8 : 14
            fuzzCheck(encoded.count == header + frame.payload.count, "the encoded frame has the wrong size")
        }
    }
    return 0
}
