import Network
import Testing

/// The URL reading and encoding the HTTP and Socket.IO clients (and the daemon's URLs) share.
@Suite struct URLPartsTests {
    @Test func partsOfAnAbsoluteURL() throws {
        let url = try URLParts(parsing: "HTTPS://Example.org:8443/a/b?q=1#top")
        #expect(url.scheme == "https" && url.host == "Example.org" && url.port == 8443 && url.target == "/a/b?q=1")
        let v6 = try URLParts(parsing: "ws://[::1]")
        #expect(v6.host == "::1" && v6.port == nil && v6.target == "")
        #expect(try URLParts(parsing: "http://h?x").target == "?x")
    }

    @Test(arguments: [("h/path", URLParts.Problem.noScheme), ("http://user@h/", .userInformation), ("http://[::1/", .unclosedIPv6Literal),
                      ("http://[::1]x/", .badPort), ("http://h:0/", .badPort), ("http://h:70000/", .badPort), ("http://h:x/", .badPort),
                      ("http:///p", .noHost), ("ws://:80", .noHost)])
    func whatIsRefused(_ text: String, _ problem: URLParts.Problem) {
        #expect(throws: problem) { try URLParts(parsing: text) }
    }

    @Test func hostHeaders() {
        #expect(URLParts.hostHeader(host: "h", port: 443, defaultPort: 443) == "h")
        #expect(URLParts.hostHeader(host: "h", port: 8080, defaultPort: 80) == "h:8080")
        #expect(URLParts.hostHeader(host: "::1", port: 9000, defaultPort: 80) == "[::1]:9000")
    }

    @Test func percentEncoding() {
        #expect(PercentEncoding.query([("token", "a b/c+é"), ("EIO", "4")]) == "token=a%20b%2Fc%2B%C3%A9&EIO=4")
        #expect(PercentEncoding.encode("x/y\u{0}~._-") == "x%2Fy%00~._-")
    }
}
