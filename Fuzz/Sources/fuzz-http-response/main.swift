import FuzzSupport
import HTTP

/// Feeds the input in chunks to the HTTP/1.1 response parser (a 4 KiB body bound; the second
/// byte picks the request method, HEAD or GET), then the end of the stream. What it yields must
/// not depend on the chunking: the whole input in one piece gives the same response or error.
/// A response's body stays within the bound.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let chunks = fuzzChunks(data, size)
    let method = (chunks.first?.first ?? 0) & 1 == 0 ? "GET" : "HEAD"
    let chunked = parse(chunks, method: method)
    let whole = parse([chunks.flatMap { $0 }], method: method)
    fuzzCheck(chunked == whole, "the outcome depends on how the bytes are split")
    if case .success(let response) = chunked {
        fuzzCheck(response.body.count <= 4096, "a body over the bound")
        fuzzCheck((100...999).contains(response.status), "a status out of range")
    }
    return 0
}

private func parse(_ chunks: [[UInt8]], method: String) -> Result<HTTPResponse, HTTPError> {
    var parser = HTTPResponseParser(requestMethod: method, maxBodyBytes: 4096)
    do {
        for chunk in chunks {
            if let response = try parser.receive(chunk) { return .success(response) }
        }
        return .success(try parser.receiveEnd())
    } catch {
        return .failure(error)
    }
}
