import Testing
@testable import JSONValue

@Suite struct JSONValueTests {
    @Test func parsesEveryKind() throws {
        let value = try JSONValue.parse(#" {"a":[1,-2.5,3e2,true,false,null],"b":"x\"\\\/\n\u00e9\ud83d\ude00","c":{}} "#)
        #expect(value["a"] == [1, -2.5, 300, true, false, nil])
        #expect(value["b"] == .string("x\"\\/\né😀"))
        #expect(value["c"] == .object([:]))
    }

    @Test func roundTripsThroughText() throws {
        let value: JSONValue = ["id": 1764400000000, "name": "An \"quoted\"\u{1}", "list": [0.5, nil, false]]
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(JSONValue.number(1764400000000).jsonText == "1764400000000")
        #expect(JSONValue.object(["b": 1, "a": 2]).jsonText == #"{"a":2,"b":1}"#)
        #expect(JSONValue.array([0, -42, 9007199254740991, -0.5, 1e300]).jsonText == "[0,-42,9007199254740991,-0.5,1e+300]")
        #expect(JSONValue.string("plain ü 😀").jsonText == "\"plain ü 😀\"")
        #expect(JSONValue.string("q\"b\\n\n").jsonText == #""q\"b\\n\n""#)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "-", "\"abc", "\"\\x\"", "\"\\ud800\"", "[1] x", "{\"a\":1,}",
        "\"tab\there\"", "NaN", "1e999",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func rejectsInvalidUTF8InStrings() {
        let bytes: [UInt8] = [0x22, 0x61, 0xFF, 0xFE, 0x22]
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(deep) }
        #expect((try? JSONValue.parse(deep, maxDepth: 400)) != nil)
    }

    @Test func lenientAccessors() {
        #expect(JSONValue.number(42).idString == "42")
        #expect(JSONValue.string("tl1").idString == "tl1")
        #expect(JSONValue.number(1.5).idString == nil)
        #expect(JSONValue.string("12.5").lenientDouble == 12.5)
        #expect(JSONValue.string("true").lenientBool == true)
    }
}

@Suite struct KeyOrderTests {
    @Test func objectKeysAreWrittenInOrder() {
        let keys = ["b", "a", "ab", "", "é", "z", "Z", "aa", "\u{1F600}", "a\u{0}"]
        let object = JSONValue.object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.null) }))
        let members = keys.sorted().map { String(decoding: JSONValue.string($0).serialized(), as: UTF8.self) + ":null" }
        #expect(String(decoding: object.serialized(), as: UTF8.self) == "{" + members.joined(separator: ",") + "}")
        // For these (normalized) keys that is also the order of their UTF-8 bytes.
        #expect(keys.sorted() == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }
}
