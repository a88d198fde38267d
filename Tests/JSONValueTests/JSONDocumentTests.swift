import Testing
import JSONValue

@Suite struct JSONDocumentTests {
    private func document(_ text: String) throws -> JSONDocument { try JSONDocument(validating: Array(text.utf8)) }

    /// The document checks exactly what `JSONValue.parse` checks.
    @Test(arguments: [
        #" {"a":[1,-2.5,3e2,true,false,null],"b":"x\"\\\/\n\u00e9\ud83d\ude00","c":{}} "#, "[]", "0", "\"é\"", "[[[]]]",
        "{\"a\":1,}", "[1,]", "[1 2]", "{\"a\" 1}", "{1:2}", "tru", "nul", "01", "1.", "-", "1e", "1e400", "\"\\x\"",
        "\"\\ud800\"", "\"a\u{1}b\"", "\"abc", "[1] x", "", "  ", "\"\\u12\"", "{\"k\":\"v\"", "[\"é\"]",
    ])
    func checksWhatParseChecks(_ text: String) {
        let parsed = try? JSONValue.parse(text)
        let checked = try? document(text)
        #expect((parsed == nil) == (checked == nil), "\(text)")
        if let parsed, let checked { #expect(checked.value(checked.root) == parsed) }
    }

    @Test func invalidUTF8InAStringIsRefused() {
        let bytes: [UInt8] = Array("[\"ok\",\"".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
        #expect(throws: JSONParseError.self) { try JSONDocument(validating: bytes) }
    }

    @Test func depthIsLimited() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: JSONParseError.self) { try JSONDocument(validating: Array(deep.utf8)) }
        #expect((try? JSONDocument(validating: Array(deep.utf8), maxDepth: 300)) != nil)
    }

    @Test func membersAndElementsAreReadInParts() throws {
        let doc = try document(#"{ "a" : 1 , "list":[ {"x":"y"} ,2, "three" ,[ ] ], "a":"last", "e":{}}"#)
        #expect(doc.kind(of: doc.root) == .object)
        #expect(doc.members(of: doc.root)?.map(\.key) == ["a", "list", "a", "e"])
        #expect(doc.member("a", of: doc.root).map(doc.value) == "last")
        #expect(doc.member("missing", of: doc.root) == nil)
        let list = try #require(doc.member("list", of: doc.root))
        #expect(doc.count(of: list) == 4)
        #expect(doc.elements(of: list)?.map(doc.value) == [["x": "y"], 2, "three", []])
        #expect(doc.elements(of: list, limit: 2)?.count == 2)
        #expect(doc.elements(of: doc.root) == nil)
        #expect(doc.members(of: list) == nil)
        let empty = try #require(doc.member("e", of: doc.root))
        #expect(doc.members(of: empty)?.isEmpty == true)
        #expect(doc.elements(of: try #require(doc.elements(of: list)?.last))?.isEmpty == true)
    }
}
