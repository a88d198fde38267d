import FuzzSupport
@testable import SocketIO

/// Feeds the input in chunks to the frame decoder (a 4 KiB payload limit) and takes every frame
/// it yields, looking at the incomplete frame's prefix after each chunk as the client does. A
/// decoded frame must re-encode (masked, as a client would) to a frame of its size, and the
/// streaming UTF-8 check of its payload, split anywhere, must agree with the whole-payload check.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var decoder = WebSocketFrameDecoder(maxPayload: 4096)
    for chunk in fuzzChunks(data, size) {
        decoder.append(chunk)
        if let (_, prefix) = decoder.incompleteFramePrefix() {
            fuzzCheck(prefix.count <= 4096, "an incomplete frame's prefix over the limit")
        }
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
            let split = Int(chunk.first ?? 0) % (frame.payload.count + 1)
            var text = UTF8StreamValidator()
            let valid = text.feed(frame.payload[..<split]) && text.feed(frame.payload[split...]) && text.isAtBoundary
            fuzzCheck(valid == Encoding.isValidUTF8(frame.payload), "the streaming UTF-8 check disagrees")
        }
    }
    return 0
}
