import FuzzSupport
import IPCProtocol
import JSONValue

/// Feeds the input in chunks to a line framer with a small limit and decodes every line as a
/// JSON-RPC message, as the daemon does with each local client's bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIPCLines(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var framer = LineFramer(maxLineBytes: 256)
    for chunk in fuzzChunks(data, size) {
        for frame in framer.append(chunk) {
            guard case .line(let line) = frame else { continue }
            fuzzCheck(line.count <= 256 && !line.contains(0x0A), "a line over the limit or with a newline")
            switch RPCIncoming.decode(line: line) {
            case .success(.request(let request)):
                // What the daemon echoes back must serialize.
                _ = RPCResponse(id: request.id ?? .null, outcome: .success(.null)).line()
            case .success, .failure:
                break
            }
        }
        fuzzCheck(framer.bufferedByteCount <= 256, "the framer holds more than its limit")
    }
    return 0
}
