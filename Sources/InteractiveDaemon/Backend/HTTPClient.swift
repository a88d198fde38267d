import CInteractiveShims
import Dispatch
import IPCProtocol

/// One HTTP reply.
struct HTTPResponse: Sendable {
    let status: Int
    let body: [UInt8]
}

/// Why no HTTP reply arrived.
enum HTTPError: Error, Sendable, CustomStringConvertible {
    case timeout(String)
    case network(String)

    var description: String {
        switch self {
        case .timeout(let detail): return "timed out: \(detail)"
        case .network(let detail): return "network error: \(detail)"
        }
    }
}

/// HTTP requests through libcurl. Each transfer blocks a dispatch worker thread, never the
/// cooperative pool; the caller awaits it.
struct HTTPClient: Sendable {
    struct Options: Sendable {
        var timeoutMs: Int
        var caFile: String?
        var insecureTLS: Bool
    }

    let options: Options

    func send(method: String, url: String, headers: [String], body: [UInt8]?) async throws(HTTPError) -> HTTPResponse {
        // A header is never dropped or sent with a line break in it (that could add a header).
        if let bad = headers.first(where: { $0.containsControlCharacters }) {
            throw .network("the \(bad.prefix { $0 != ":" }) header holds a control character; not sent")
        }
        let options = self.options
        let result: Result<HTTPResponse, HTTPError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: HTTPClient.perform(method: method, url: url, headers: headers, body: body, options: options))
            }
        }
        return try result.get()
    }

    private static func perform(method: String, url: String, headers: [String], body: [UInt8]?,
                                options: Options) -> Result<HTTPResponse, HTTPError> {
        var response = interactive_http_response()
        let headerLines = headers.joined(separator: "\n")
        if let body {
            body.withUnsafeBytes { raw in
                interactive_http_perform(method, url, headerLines, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), raw.count,
                                         options.timeoutMs, options.caFile, options.insecureTLS ? 1 : 0, &response)
            }
        } else {
            interactive_http_perform(method, url, headerLines, nil, 0, options.timeoutMs, options.caFile,
                                     options.insecureTLS ? 1 : 0, &response)
        }
        defer { interactive_http_response_free(&response) }
        guard response.curl_code == 0 else {
            let message = withUnsafeBytes(of: response.error) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .failure(response.timed_out != 0 ? .timeout(message) : .network(message))
        }
        var bytes: [UInt8] = []
        if let pointer = response.body, response.body_length > 0 {
            bytes = Array(UnsafeRawBufferPointer(start: pointer, count: response.body_length))
        }
        return .success(HTTPResponse(status: response.status, body: bytes))
    }
}
