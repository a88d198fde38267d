import Testing
@testable import JSONValue

@Suite struct JSONValueTests {
    @Test func parsesEveryKind() throws {
        let value = try JSONValue.parse(#" {"a":[1,-2.5,3e2,true,false,null],"b":"x\"\\\/\n\u00e9\ud83d\ude00","c":{}} "#)
        #expect(value["a"] == [1, -2.5, 300, true, false, nil])
        #expect(value["b"] == .string("x\"\\/\né😀"))
        #expect(value["c"] == .object([:]))
    }

    @Test func nestedObjectsKeepTheirOwnMembersAndARepeatedKeyItsLastValue() throws {
        let value = try JSONValue.parse(#"{"a":1,"o":{"a":2,"p":{"a":3,"a":4},"b":[{"a":5},{}]},"a":6,"z":{"y":{}}}"#)
        #expect(value == ["a": 6, "o": ["a": 2, "p": ["a": 4], "b": [["a": 5], [:]]], "z": ["y": [:]]])
        #expect((try? JSONValue.parse(#"{"a":{"b":1,}}"#)) == nil)
        #expect(try JSONValue.parse(#"[{"k":1},{"k":2}]"#) == [["k": 1], ["k": 2]])
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

    /// The word-at-a-time scan finds each byte that needs escaping at every offset of a long
    /// string (before, inside and after its eight-byte words), and none in a string without one.
    @Test func aByteThatNeedsEscapingIsFoundAtEveryOffset() {
        for special: UInt8 in [0x00, 0x0A, 0x1F, 0x22, 0x5C] {
            for length in [1, 7, 8, 9, 23] {
                for offset in 0..<length {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[offset] = special
                    let found = bytes.withUnsafeBufferPointer(JSONValue.needsEscaping)
                    #expect(found, "0x\(String(special, radix: 16)) at \(offset) of \(length)")
                }
            }
        }
        // Neighbours of the escaped bytes, and bytes with the high bit set, need none.
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xA9, 0xFF] + Array("abcdefghijklmnop".utf8)
        #expect(!plain.withUnsafeBufferPointer(JSONValue.needsEscaping))
        let accents = String(repeating: "é", count: 9)
        #expect(JSONValue.string(accents + "\"tail").jsonText == "\"" + accents + "\\\"tail\"")
    }

    /// The one parse tells where the root array's elements and their members lie, as written
    /// (white space around them excluded); nothing deeper, and nothing when the root is no array.
    @Test func parsingTellsWhereTheRootArraysPartsLie() throws {
        let text = Array(#" [ "ev" , {"a": [1, {"b":2}], "c":"x", "a" :3}, [ {"d":1} ], 4 ] "#.utf8)
        let (value, ranges) = try JSONValue.parseWithElementRanges(text)
        #expect(value == (try JSONValue.parse(text)))
        func string(_ range: Range<Int>?) -> String? { range.map { String(decoding: text[$0], as: UTF8.self) } }
        #expect(ranges.elements.map { string($0) } == [#""ev""#, #"{"a": [1, {"b":2}], "c":"x", "a" :3}"#, #"[ {"d":1} ]"#, "4"])
        #expect(string(ranges.member("c", ofElement: 1)) == #""x""#)
        #expect(string(ranges.member("a", ofElement: 1)) == "3")  // the last, as parse keeps it
        #expect(ranges.member("b", ofElement: 1) == nil && ranges.member("d", ofElement: 2) == nil)
        #expect(try JSONValue.parseWithElementRanges(Array(#"{"a":{"b":1}}"#.utf8)).ranges == JSONElementRanges())
        #expect(throws: JSONParseError.self) { try JSONValue.parseWithElementRanges(Array("[1,".utf8)) }
    }

    @Test func controlBytesAreFoundAtEveryOffset() {
        for length in [1, 8, 17] {
            for offset in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: " "), count: length)
                bytes[offset] = 0x0A
                #expect(bytes.withUnsafeBufferPointer(JSONValue.containsControlBytes), "at \(offset) of \(length)")
            }
        }
        let plain = Array(#"{"a": "é\"", "b": [1, 2]} "#.utf8)
        #expect(!plain.withUnsafeBufferPointer(JSONValue.containsControlBytes))
    }

    @Test func serializedByteCountIsTheSerializedLength() throws {
        var values: [JSONValue] = [
            nil, true, false, 0, -0.0, 7, -7, 10, 99, 100, -1000, 1764400000000, -9007199254740992, 9007199254740993,
            0.5, -2.25, 1e300, .number(.infinity), .number(.nan), "", "plain", "q\"b\\n\n\r\t", "\u{1}\u{1F}\u{7F}", "é😀",
            [], [:], [1, [2, [3]], ["k": nil]], ["b": 1, "a": "x", "": [:]],
        ]
        values.append(try JSONValue.parse(#"{"data":{"timelineId":"t-1","url":"http://x/q.html?id=t-1","position":{"alignment":3},"sentAt":1764523456789.123,"targets":["all"],"traceLock":false}}"#))
        for value in values {
            #expect(value.serializedByteCount == value.serialized().count, "\(value)")
        }
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "tru", "01", "1.", "-", "\"abc", "\"\\x\"", "\"\\ud800\"", "[1] x", "{\"a\":1,}",
        "\"tab\there\"", "NaN", "1e999",
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    /// Numbers of up to 15 digits without an exponent are computed from their digits; the value
    /// must be the one the text gives (`Double(String)`), to the bit, as it is for every other number.
    @Test func numbersAreTheValuesTheirTextGives() throws {
        var texts = ["0", "-0", "7", "-7", "0.1", "0.3", "-12.250", "1764523456789.123", "123456789012345",
                     "-123456789012345", "999999999999999", "0.000000000000001", "1234567890123456", "12345678901234567890",
                     "1.5e3", "2E-2", "0.1234567890123456789", "9007199254740993", "4.35", "1.005", "33.3"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let integer = String(UInt64.random(in: 0..<1_000_000_000_000, using: &generator))
            let fraction = String(UInt64.random(in: 0..<1_000_000, using: &generator))
            texts.append((Bool.random(using: &generator) ? "-" : "") + integer + "." + fraction)
        }
        for text in texts {
            let parsed = try JSONValue.parse(text)
            let expected = try #require(Double(text))
            guard case .number(let value) = parsed else {
                Issue.record("\(text) is not a number: \(parsed)")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) ≠ \(expected)")
        }
    }

    @Test func rejectsInvalidUTF8InStrings() throws {
        let bytes: [UInt8] = [0x22, 0x61, 0xFF, 0xFE, 0x22]
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
        // After ASCII, and as a member name (the ASCII-only path must not take these).
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(#"{"abc"#.utf8) + [0xC3] + Array(#"":1}"#.utf8)) }
        #expect(try JSONValue.parse(Array(#"{"caf"#.utf8) + [0xC3, 0xA9] + Array(#"":"ok"}"#.utf8))["café"] == "ok")
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
        let object = JSONValue.object(JSONObject(uniquing: keys.map { (key: $0, value: JSONValue.null) }))
        let members = keys.sorted().map { String(decoding: JSONValue.string($0).serialized(), as: UTF8.self) + ":null" }
        #expect(String(decoding: object.serialized(), as: UTF8.self) == "{" + members.joined(separator: ",") + "}")
        // For these (normalized) keys that is also the order of their UTF-8 bytes.
        #expect(keys.sorted() == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }
}
