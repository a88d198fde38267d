/// Reads one HTTP/1.1 response from the bytes of a connection, as they arrive: a value type with
/// no I/O. Feed it with `receive`, and with `receiveEnd` when the peer closes; it returns the
/// response once complete and says whether the connection may carry another request.
///
/// Handles the status line, headers (the whole head bounded), `Content-Length`, chunked bodies
/// (extensions and trailers read and dropped), close-delimited bodies, interim 1xx responses
/// (skipped), and the responses that never have a body (to HEAD, 204, 304).
///
/// Whatever the peer sends, the work and memory of one response are bounded: a body past
/// `maxBodyBytes` fails as soon as its length is known or it grows past it, at most
/// `maxInterimResponses` interim responses precede the final one, and a chunked body's framing
/// (size lines with their extensions, trailers) is at most `maxChunkFramingBytes` more than the
/// body itself, so a peer cannot keep the client parsing 1-byte chunks or `100 Continue` until
/// the request's timeout.
public struct HTTPResponseParser: Sendable {
    /// Bound of one response head (status line and headers), and of a chunked body's trailers.
    public static let maxHeadBytes = 64 * 1024
    /// Bound of one chunk-size line (size and extensions).
    static let maxChunkLineBytes = 4 * 1024
    /// Interim (1xx) responses taken before the final one; one more fails the response.
    public static let maxInterimResponses = 16
    /// Bytes of a chunked body's framing (chunk-size lines, extensions, line ends, trailers)
    /// allowed beyond the body's own bytes received so far; past it the response fails.
    public static let maxChunkFramingBytes = 64 * 1024

    private enum State: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers(bytes: Int)
        case untilClose
        case complete

        var isComplete: Bool {
            if case .complete = self { return true }
            return false
        }
    }

    private let bodiless: Bool
    private let maxBodyBytes: Int
    private var state = State.head
    /// Bytes received and not parsed yet.
    private var buffer: [UInt8] = []
    /// Where the search for the end of the head resumes in `buffer`.
    private var headScanFrom = 0
    private var status = 0
    private var headers = HTTPHeaders()
    private var body: [UInt8] = []
    private var persistent = false
    private var interimResponses = 0
    /// Framing bytes of the chunked body so far (see `maxChunkFramingBytes`).
    private var chunkFraming = 0

    /// True once any byte of a response arrived (a reused connection that closes before that
    /// never took the request).
    public private(set) var receivedAny = false

    /// True when the response is complete, its framing allows another exchange on the
    /// connection, and nothing followed it.
    public var connectionReusable: Bool {
        if case .complete = state { return persistent && buffer.isEmpty }
        return false
    }

    /// `requestMethod` decides whether a body can follow (never for HEAD); a body larger than
    /// `maxBodyBytes` fails the response.
    public init(requestMethod: String, maxBodyBytes: Int) {
        bodiless = requestMethod == "HEAD"
        self.maxBodyBytes = max(0, maxBodyBytes)
    }

    /// Takes bytes from the connection; returns the response when they complete it.
    public mutating func receive(_ bytes: some Collection<UInt8>) throws(HTTPError) -> HTTPResponse? {
        guard !bytes.isEmpty else { return nil }
        receivedAny = true
        if case .complete = state {
            // Bytes after a complete response: not kept, and the connection is not reused.
            persistent = false
            return nil
        }
        buffer.append(contentsOf: bytes)
        return try parse()
    }

    /// The peer closed the connection: completes a close-delimited body, else fails.
    public mutating func receiveEnd() throws(HTTPError) -> HTTPResponse {
        switch state {
        case .untilClose:
            state = .complete
            persistent = false
            return finished()
        case .head:
            throw receivedAny ? .connectionClosed("in the response head") : .connectionClosed("before a response")
        case .complete:
            return finished()
        default:
            throw .connectionClosed("before the end of the body")
        }
    }

    private mutating func parse() throws(HTTPError) -> HTTPResponse? {
        var position = 0
        defer {
            buffer.removeFirst(min(position, buffer.count))
            headScanFrom = max(0, headScanFrom - position)
        }
        while position < buffer.count {
            switch state {
            case .head:
                guard let end = findHeadEnd(from: position) else {
                    guard buffer.count - position <= Self.maxHeadBytes else { throw .responseTooLarge("head over 64 KiB") }
                    return nil
                }
                guard end.lineEnd - position <= Self.maxHeadBytes else { throw .responseTooLarge("head over 64 KiB") }
                try parseHead(buffer[position..<end.lineEnd])
                position = end.next
                headScanFrom = position
                if state.isComplete { return finished() }
            case .fixedBody(let remaining):
                let count = min(remaining, buffer.count - position)
                body.append(contentsOf: buffer[position..<position + count])
                position += count
                if remaining == count { state = .complete; return finished() }
                state = .fixedBody(remaining: remaining - count)
            case .chunkSize:
                guard let line = try nextLine(from: position, limit: Self.maxChunkLineBytes, what: "chunk size line") else { return nil }
                let size = try Self.chunkSize(buffer[position..<line.lineEnd])
                try countFraming(line.next - position)
                position = line.next
                if size == 0 {
                    state = .trailers(bytes: 0)
                } else {
                    guard size <= maxBodyBytes - body.count else { throw .responseTooLarge("body over \(maxBodyBytes) bytes") }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let count = min(remaining, buffer.count - position)
                body.append(contentsOf: buffer[position..<position + count])
                position += count
                state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            case .chunkDataEnd:
                guard let line = try nextLine(from: position, limit: 2, what: "chunk end") else { return nil }
                guard line.lineEnd == position else { throw .malformedResponse("chunk longer than its size") }
                try countFraming(line.next - position)
                position = line.next
                state = .chunkSize
            case .trailers(let bytes):
                let limit = Self.maxHeadBytes - bytes
                guard limit >= 0 else { throw .malformedResponse("trailers too long") }
                guard let line = try nextLine(from: position, limit: limit, what: "trailers") else { return nil }
                let length = line.next - position
                try countFraming(length)
                position = line.next
                if line.lineEnd == line.lineStart {
                    state = .complete
                    return finished()
                }
                state = .trailers(bytes: bytes + length)
            case .untilClose:
                let count = buffer.count - position
                guard count <= maxBodyBytes - body.count else { throw .responseTooLarge("body over \(maxBodyBytes) bytes") }
                body.append(contentsOf: buffer[position...])
                position = buffer.count
            case .complete:
                return nil
            }
        }
        return nil
    }

    /// Counts `bytes` of chunk framing; throws once the framing outgrows the body by more than
    /// `maxChunkFramingBytes`.
    private mutating func countFraming(_ bytes: Int) throws(HTTPError) {
        chunkFraming += bytes
        guard chunkFraming - body.count <= Self.maxChunkFramingBytes else {
            throw .responseTooLarge("chunk framing of \(chunkFraming) bytes for a body of \(body.count)")
        }
    }

    private func finished() -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A line's bounds in `buffer`: `lineEnd` before its CR LF (or bare LF), `next` after it.
    private struct Line {
        var lineStart: Int
        var lineEnd: Int
        var next: Int
    }

    /// The line starting at `start`, nil while incomplete; throws when it runs past `limit` bytes.
    private func nextLine(from start: Int, limit: Int, what: String) throws(HTTPError) -> Line? {
        let end = min(buffer.count, start + limit + 2)
        guard let lf = buffer[start..<end].firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.count - start > limit + 1 { throw .malformedResponse("\(what) too long") }
            return nil
        }
        let lineEnd = lf > start && buffer[lf - 1] == UInt8(ascii: "\r") ? lf - 1 : lf
        guard lineEnd - start <= limit else { throw .malformedResponse("\(what) too long") }
        return Line(lineStart: start, lineEnd: lineEnd, next: lf + 1)
    }

    /// The end of the head (an empty line) at or after `start`, nil while incomplete.
    private mutating func findHeadEnd(from start: Int) -> Line? {
        var index = max(start, headScanFrom)
        while let lf = buffer[index...].firstIndex(of: UInt8(ascii: "\n")) {
            // The line that this LF ends is empty when the previous line ended just before it.
            let previous = lf - 1
            if previous >= start, buffer[previous] == UInt8(ascii: "\n") {
                return Line(lineStart: start, lineEnd: previous, next: lf + 1)
            }
            if previous - 1 >= start, buffer[previous] == UInt8(ascii: "\r"), buffer[previous - 1] == UInt8(ascii: "\n") {
                return Line(lineStart: start, lineEnd: previous - 1, next: lf + 1)
            }
            index = lf + 1
        }
        headScanFrom = buffer.count
        return nil
    }

    /// Parses a head (status line and header lines, without the empty line) and sets the state
    /// that reads what follows it.
    private mutating func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPError) {
        var lines = head.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        guard !lines.isEmpty else { throw .malformedResponse("empty head") }
        let statusLine = lines.removeFirst()
        let (minorVersion, code) = try Self.statusLine(statusLine)
        var fields = HTTPHeaders()
        for line in lines {
            fields.add(try Self.headerName(line), try Self.headerValue(line))
        }
        if (100..<200).contains(code) {
            guard code != 101 else { throw .malformedResponse("101 Switching Protocols without an upgrade request") }
            interimResponses += 1
            guard interimResponses <= Self.maxInterimResponses else {
                throw .malformedResponse("more than \(Self.maxInterimResponses) interim responses")
            }
            state = .head  // an interim response: the final one follows
            return
        }
        status = code
        headers = fields
        let connection = fields.tokens("Connection")
        persistent = minorVersion >= 1 ? !connection.contains("close") : connection.contains("keep-alive") && !connection.contains("close")
        if bodiless || code == 204 || code == 304 {
            state = .complete
            return
        }
        let codings = fields.tokens("Transfer-Encoding")
        if !codings.isEmpty {
            // Transfer-Encoding wins over Content-Length; a response with both is suspect, so
            // its connection is not reused (RFC 9112, 6.3).
            if !fields.values("Content-Length").isEmpty { persistent = false }
            if codings.last == "chunked" {
                state = .chunkSize
            } else {
                persistent = false
                state = .untilClose
            }
            return
        }
        if let length = try Self.contentLength(fields) {
            guard length <= maxBodyBytes else { throw .responseTooLarge("body of \(length) bytes over \(maxBodyBytes)") }
            body.reserveCapacity(length)  // the body grows once, not by doubling
            state = length == 0 ? .complete : .fixedBody(remaining: length)
            return
        }
        persistent = false
        state = .untilClose
    }

    /// `HTTP/1.x SSS reason`: the minor version and the status.
    private static func statusLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> (minor: Int, status: Int) {
        let bytes = Array(line)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, bytes.starts(with: prefix), bytes[8] == UInt8(ascii: " "),
              let minor = digit(bytes[7]), let s1 = digit(bytes[9]), let s2 = digit(bytes[10]), let s3 = digit(bytes[11]),
              s1 >= 1, bytes.count == 12 || bytes[12] == UInt8(ascii: " ")
        else {
            throw .malformedResponse("bad status line")
        }
        return (minor, s1 * 100 + s2 * 10 + s3)
    }

    private static func digit(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func headerName(_ line: ArraySlice<UInt8>) throws(HTTPError) -> String {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .malformedResponse(line.first == UInt8(ascii: " ") || line.first == UInt8(ascii: "\t")
                ? "folded header line" : "header line without a colon")
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else { throw .malformedResponse("bad header name") }
        return String(decoding: name, as: UTF8.self)
    }

    private static func headerValue(_ line: ArraySlice<UInt8>) throws(HTTPError) -> String {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformedResponse("header line without a colon") }
        var value = line[(colon + 1)...]
        while let first = value.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { value = value.dropFirst() }
        while let last = value.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { value = value.dropLast() }
        guard !value.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") }) else { throw .malformedResponse("control character in a header value") }
        return String(decoding: value, as: UTF8.self)
    }

    /// The `Content-Length`, nil without one. Repeated or listed values must all agree.
    private static func contentLength(_ fields: HTTPHeaders) throws(HTTPError) -> Int? {
        let values = fields.values("Content-Length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard !values.isEmpty else { return nil }
        var length: Int?
        for text in values {
            let trimmed = text.trimmingHTTPWhitespace()
            guard !trimmed.isEmpty, trimmed.utf8.count <= 18, trimmed.utf8.allSatisfy({ digit($0) != nil }), let value = Int(trimmed) else {
                throw .malformedResponse("bad Content-Length")
            }
            guard length == nil || length == value else { throw .malformedResponse("conflicting Content-Length values") }
            length = value
        }
        return length
    }

    /// The size of a chunk from its line: hex digits, optional blanks, optional `;extensions`.
    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPError) -> Int {
        var size = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = hexDigit(line[index]) {
            digits += 1
            guard digits <= 15 else { throw .responseTooLarge("chunk size too large") }
            size = size * 16 + value
            index += 1
        }
        guard digits > 0 else { throw .malformedResponse("bad chunk size") }
        while index < line.endIndex, line[index] == UInt8(ascii: " ") || line[index] == UInt8(ascii: "\t") { index += 1 }
        guard index == line.endIndex || line[index] == UInt8(ascii: ";") else { throw .malformedResponse("bad chunk size") }
        return size
    }

    private static func hexDigit(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
    }
}
