import HTTP
import Testing

@Suite struct HTTPRequestTests {
    private func text(_ request: HTTPRequest) throws -> String {
        String(decoding: try request.encoded(), as: UTF8.self)
    }

    @Test func aGetWithHeaders() throws {
        let url = try HTTPURL(parsing: "http://127.0.0.1:8080/api/public/vip-status?mediaId=m%201#top")
        var headers = HTTPHeaders()
        headers.add("X-TENANT-ID", "demo")
        headers.add("Accept", "application/json")
        #expect(try text(HTTPRequest(method: "GET", url: url, headers: headers))
                == "GET /api/public/vip-status?mediaId=m%201 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-TENANT-ID: demo\r\n"
                + "Accept: application/json\r\n\r\n")
    }

    @Test func aPostCarriesItsLength() throws {
        let url = try HTTPURL(parsing: "https://api.example/v1/play")
        let request = HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        #expect(try text(request) == "POST /v1/play HTTP/1.1\r\nHost: api.example\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}")
        let empty = HTTPRequest(method: "POST", url: url, body: [])
        #expect(try text(empty).hasSuffix("Content-Length: 0\r\n\r\n"))
    }

    @Test(arguments: ["a\nInjected: yes", "a\rb", "tab\there", "nul\u{0}", "del\u{7F}", "c1\u{85}", "ls\u{2028}"])
    func controlCharactersInAValueAreRefused(_ value: String) throws {
        let request = HTTPRequest(method: "GET", url: try HTTPURL(parsing: "http://h/"), headers: ["Authorization": value])
        #expect(throws: HTTPError.invalidRequest("the Authorization header holds a control character")) { try request.encoded() }
    }

    @Test(arguments: ["Host", "content-length", "Transfer-Encoding", "Connection"])
    func framingHeadersAreTheClients(_ name: String) throws {
        let request = HTTPRequest(method: "GET", url: try HTTPURL(parsing: "http://h/"), headers: [name: "x"])
        #expect(throws: HTTPError.invalidRequest("the \(name) header is set by the client")) { try request.encoded() }
    }

    @Test func badNamesAreRefused() throws {
        let url = try HTTPURL(parsing: "http://h/")
        #expect(throws: HTTPError.self) { try HTTPRequest(method: "GET /x", url: url).encoded() }
        #expect(throws: HTTPError.self) { try HTTPRequest(method: "GET", url: url, headers: ["Bad Name": "x"]).encoded() }
        #expect(throws: HTTPError.self) { try HTTPRequest(method: "GET", url: url, headers: ["Bad:Name": "x"]).encoded() }
    }
}

@Suite struct HTTPURLTests {
    @Test func parts() throws {
        let url = try HTTPURL(parsing: "HTTPS://Example.org:8443?q=1")
        #expect(url.secure && url.host == "Example.org" && url.port == 8443 && url.target == "/?q=1")
        #expect(url.hostHeader == "Example.org:8443")
        let plain = try HTTPURL(parsing: "http://example.org")
        #expect(plain.port == 80 && plain.target == "/" && plain.hostHeader == "example.org")
        let v6 = try HTTPURL(parsing: "http://[::1]:9000/a/b")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.target == "/a/b" && v6.hostHeader == "[::1]:9000")
        #expect(try HTTPURL(parsing: "https://[::1]/").hostHeader == "[::1]")
        #expect(url.origin != plain.origin)
    }

    @Test(arguments: ["ftp://h/", "h/path", "http://user@h/", "http://h:0/", "http://h:70000/", "http://h:x/", "http:///p",
                      "http://h/a b", "http://h/\n", "http://[::1/"])
    func refused(_ text: String) {
        #expect(throws: HTTPError.self) { try HTTPURL(parsing: text) }
    }
}
