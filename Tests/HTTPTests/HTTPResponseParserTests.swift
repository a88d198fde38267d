import HTTP
import Testing

/// What feeding a byte stream gave: the response or the error, and whether the connection may be reused.
private struct Outcome: Equatable {
    var result: Result<HTTPResponse, HTTPError>
    var reusable: Bool
}

/// Feeds `text` to a fresh parser cut in two at `offset` (then byte by byte when `offset` is nil),
/// and the end of the stream after it when `thenClose`.
private func feed(_ bytes: [UInt8], splitAt offset: Int?, method: String, maxBody: Int, thenClose: Bool) -> Outcome {
    var parser = HTTPResponseParser(requestMethod: method, maxBodyBytes: maxBody)
    let pieces: [ArraySlice<UInt8>] = offset.map { [bytes[..<$0], bytes[$0...]] } ?? bytes.indices.map { bytes[$0...$0] }
    do {
        for piece in pieces {
            if let response = try parser.receive(piece) { return Outcome(result: .success(response), reusable: parser.connectionReusable) }
        }
        guard thenClose else { return Outcome(result: .failure(.connectionClosed("test: incomplete")), reusable: false) }
        return Outcome(result: .success(try parser.receiveEnd()), reusable: parser.connectionReusable)
    } catch {
        return Outcome(result: .failure(error), reusable: false)
    }
}

/// The outcome of `text`, checked to be the same whatever offset the stream is split at, and
/// when it arrives byte by byte.
private func parse(_ text: String, method: String = "GET", maxBody: Int = 1 << 20, thenClose: Bool = false,
                   sourceLocation: SourceLocation = #_sourceLocation) -> Outcome {
    let bytes = Array(text.utf8)
    let whole = feed(bytes, splitAt: 0, method: method, maxBody: maxBody, thenClose: thenClose)
    for offset in [Int?.none] + (1...bytes.count).map(Optional.some) {
        let split = feed(bytes, splitAt: offset, method: method, maxBody: maxBody, thenClose: thenClose)
        #expect(split == whole, "split at \(offset.map(String.init) ?? "every byte")", sourceLocation: sourceLocation)
        if split != whole { break }
    }
    return whole
}

private func body(_ outcome: Outcome) -> String? {
    guard case .success(let response) = outcome.result else { return nil }
    return String(decoding: response.body, as: UTF8.self)
}

private func error(_ outcome: Outcome) -> HTTPError? {
    guard case .failure(let error) = outcome.result else { return nil }
    return error
}

@Suite struct HTTPResponseParserTests {
    @Test func contentLengthBody() throws {
        let outcome = parse("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
        let response = try outcome.result.get()
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(body(outcome) == "{\"ok\":true}")
        #expect(outcome.reusable)
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        let outcome = parse("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1 ; x\r\n,\r\nB\r\n 0123456789\r\n0\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n")
        #expect(body(outcome) == "hello, 0123456789")
        #expect(outcome.reusable)
    }

    @Test func chunkedWithoutTrailers() {
        let outcome = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        #expect(body(outcome) == "abc")
    }

    @Test func closeDelimitedBody() {
        let outcome = parse("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", thenClose: true)
        #expect(body(outcome) == "until the end")
        #expect(!outcome.reusable)
        #expect(error(parse("HTTP/1.1 200 OK\r\n\r\nuntil the end")) == .connectionClosed("test: incomplete"), "complete before the close")
    }

    @Test func aTransferCodingOtherThanChunkedLastReadsUntilClose() {
        let outcome = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw", thenClose: true)
        #expect(body(outcome) == "raw")
        #expect(!outcome.reusable)
    }

    @Test func interimResponsesAreSkipped() throws {
        let outcome = parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let response = try outcome.result.get()
        #expect(response.status == 200)
        #expect(response.headers["Link"] == nil)
        #expect(body(outcome) == "ok")
    }

    @Test(arguments: [("HEAD", 200), ("GET", 204), ("GET", 304)])
    func responsesWithoutABody(method: String, status: Int) throws {
        let outcome = parse("HTTP/1.1 \(status) X\r\nContent-Length: 5\r\n\r\n", method: method)
        #expect(try outcome.result.get().status == status)
        #expect(body(outcome) == "")
        #expect(outcome.reusable)
    }

    @Test func bareLineFeedsAreAccepted() {
        #expect(body(parse("HTTP/1.1 200 OK\nContent-Length: 2\n\nhi")) == "hi")
        #expect(body(parse("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nhi\n0\n\n")) == "hi")
    }

    @Test func statusLineWithoutReason() throws {
        #expect(try parse("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n").result.get().status == 404)
    }

    @Test func keepAliveDecision() {
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").reusable)
        #expect(!parse("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n").reusable)
        #expect(!parse("HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\nContent-Length: 0\r\n\r\n").reusable)
        #expect(!parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable)
        #expect(parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").reusable)
        #expect(!parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n").reusable,
                "Transfer-Encoding with Content-Length")
    }

    @Test func bytesAfterTheResponseMakeTheConnectionUnusable() throws {
        var parser = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 100)
        #expect(try parser.receive(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)) != nil)
        #expect(parser.connectionReusable)
        #expect(try parser.receive(Array("X".utf8)) == nil)
        #expect(!parser.connectionReusable)
    }

    @Test func repeatedEqualContentLengthsAreOne() {
        #expect(body(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nhi")) == "hi")
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    ])
    func badContentLengths(_ text: String) {
        #expect(error(parse(text)) == .malformedResponse(text.contains("Length: 3") ? "conflicting Content-Length values" : "bad Content-Length"))
    }

    @Test(arguments: [
        ("<html>garbage</html>\r\n\r\n", "bad status line"),
        ("HTTP/2 200 OK\r\n\r\n", "bad status line"),
        ("HTTP/1.1 20 OK\r\n\r\n", "bad status line"),
        ("HTTP/1.1 099 OK\r\n\r\n", "bad status line"),
        ("HTTP/1.1 200OK\r\n\r\n", "bad status line"),
        ("\r\nHTTP/1.1 200 OK\r\n\r\n", "bad status line"),
        ("HTTP/1.1 200 OK\r\nNo colon: here\r\n\r\n", "bad header name"),
        ("HTTP/1.1 200 OK\r\nNocolon\r\n\r\n", "header line without a colon"),
        ("HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n", "folded header line"),
        ("HTTP/1.1 200 OK\r\nA b: 1\r\n\r\n", "bad header name"),
        ("HTTP/1.1 200 OK\r\n: 1\r\n\r\n", "bad header name"),
        ("HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n", "control character in a header value"),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "101 Switching Protocols without an upgrade request"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", "bad chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "bad chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 x\r\n", "bad chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", "chunk longer than its size"),
    ])
    func malformedResponses(_ text: String, _ reason: String) {
        #expect(error(parse(text)) == .malformedResponse(reason))
    }

    @Test func theHeadIsBounded() {
        let big = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: HTTPResponseParser.maxHeadBytes) + "\r\n\r\n"
        var parser = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 10)
        #expect(throws: HTTPError.responseTooLarge("head over 64 KiB")) { _ = try parser.receive(Array(big.utf8)) }
        // Without an end in sight: refused as soon as more than the bound is buffered.
        var endless = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 10)
        #expect(throws: HTTPError.responseTooLarge("head over 64 KiB")) {
            for _ in 0..<70 { _ = try endless.receive([UInt8](repeating: UInt8(ascii: "a"), count: 1024)) }
        }
    }

    @Test func trailersAreBounded() {
        var parser = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 10)
        #expect(throws: HTTPError.self) {
            _ = try parser.receive(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".utf8))
            for _ in 0..<70 { _ = try parser.receive(Array(("X: " + String(repeating: "b", count: 1020) + "\r\n").utf8)) }
        }
    }

    @Test func theBodyIsBoundedPerRequest() {
        #expect(error(parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", maxBody: 10))
                == .responseTooLarge("body of 11 bytes over 10"))
        #expect(body(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhelloworld", maxBody: 10)) == "helloworld")
        #expect(error(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n", maxBody: 10))
                == .responseTooLarge("body over 10 bytes"))
        #expect(error(parse("HTTP/1.1 200 OK\r\n\r\nhello world", maxBody: 10, thenClose: true)) == .responseTooLarge("body over 10 bytes"))
    }

    /// A `100 Continue` flood burned a core until the request's timeout: a few interim responses
    /// are skipped, one more fails the response at once.
    @Test func interimResponsesAreBounded() throws {
        let interim = "HTTP/1.1 100 Continue\r\n\r\n"
        let final = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        #expect(body(parse(String(repeating: interim, count: HTTPResponseParser.maxInterimResponses) + final)) == "ok")
        var parser = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 10)
        #expect(throws: HTTPError.malformedResponse("more than \(HTTPResponseParser.maxInterimResponses) interim responses")) {
            for _ in 0..<100_000 { _ = try parser.receive(Array(interim.utf8)) }
        }
    }

    /// A chunked body's framing (size lines, extensions, trailers) may outgrow its data by
    /// `maxChunkFramingBytes` at most: 1-byte chunks with 4 KiB of extensions each fail early,
    /// not after megabytes.
    @Test func chunkFramingIsBounded() {
        var parser = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 1 << 20)
        let chunk = Array(("1;" + String(repeating: "e", count: 4000) + "\r\nx\r\n").utf8)
        var sent = 0
        #expect(throws: HTTPError.self) {
            _ = try parser.receive(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
            for _ in 0..<1000 {
                _ = try parser.receive(chunk)
                sent += 1
            }
        }
        #expect(sent * 4008 <= HTTPResponseParser.maxChunkFramingBytes + 8016, "\(sent) chunks taken")
        // Ordinary framing (a size line per kilobyte of data) is far inside the bound.
        let piece = "400\r\n" + String(repeating: "d", count: 1024) + "\r\n"
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: piece, count: 200) + "0\r\n\r\n"
        var ordinary = HTTPResponseParser(requestMethod: "GET", maxBodyBytes: 1 << 20)
        #expect((try? ordinary.receive(Array(text.utf8)))??.body.count == 200 * 1024)
    }

    @Test func aClosedConnectionBeforeTheEndIsAnError() {
        #expect(error(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", thenClose: true))
                == .connectionClosed("before the end of the body"))
        #expect(error(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", thenClose: true))
                == .connectionClosed("before the end of the body"))
        #expect(error(parse("HTTP/1.1 200 OK\r\nContent-", thenClose: true)) == .connectionClosed("in the response head"))
    }

    @Test func aConnectionClosedBeforeAnyByteSaysSo() {
        var parser = HTTPResponseParser(requestMethod: "POST", maxBodyBytes: 10)
        #expect(throws: HTTPError.connectionClosed("before a response")) { _ = try parser.receiveEnd() }
        #expect(!parser.receivedAny)
    }
}
