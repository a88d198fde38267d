@testable import InteractiveDaemon
import Testing

/// The URL checks and the query building done on every overlay's way to the screen.
@Suite struct URLTextTests {
    @Test func anEndpointURLsSchemeAndHost() throws {
        let plain = try #require(EndpointURL("HTTPS://user:pw@cdn.example:8443/a?b#c"))
        #expect(plain.scheme == "https")
        #expect(plain.host == "cdn.example")
        let v6 = try #require(EndpointURL("http://[::1]:8080/x"))
        #expect(v6.host == "::1")
        // The first "://" ends the scheme.
        #expect(EndpointURL("a:b://h/x")?.scheme == "a:b")
    }

    @Test func whatIsNoEndpointURL() {
        for text in ["", "://host", "http://", "http:///path", "http://user@/x", "http://[::1/x", "cdn.example/x",
                     "http://cdn/a b", "http://cdn/\u{00A0}x", "http://cdn/\u{2028}", "http://cdn/\u{7F}", "http://cdn/\u{85}"] {
            #expect(EndpointURL(text) == nil, "\(text.debugDescription)")
        }
        #expect(EndpointURL("https://cdn.example/é/😀") != nil)
    }

    @Test func parametersJoinTheQueryBeforeTheFragment() {
        #expect(URLText.appendingQuery("https://cdn/q", [("a", "1")]) == "https://cdn/q?a=1")
        #expect(URLText.appendingQuery("https://cdn/q?", [("a", "1")]) == "https://cdn/q?a=1")
        #expect(URLText.appendingQuery("https://cdn/q?x=1&", [("a", "1")]) == "https://cdn/q?x=1&a=1")
        #expect(URLText.appendingQuery("https://cdn/q?x=1#f?g", [("a", "1"), ("b", "2")]) == "https://cdn/q?x=1&a=1&b=2#f?g")
        #expect(URLText.appendingQuery("https://cdn/q", []) == "https://cdn/q")
    }

    @Test func valuesArePercentEncodedByteByByte() {
        #expect(URLText.queryValue("a b&c=é~._-") == "a%20b%26c%3D%C3%A9~._-")
        #expect(URLText.pathSegment("x/y\u{0}") == "x%2Fy%00")
    }
}
