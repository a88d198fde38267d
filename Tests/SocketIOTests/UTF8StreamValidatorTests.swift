import Testing
@testable import SocketIO

@Suite struct UTF8StreamValidatorTests {
    static let samples: [[UInt8]] = [
        Array("héllo ✓ 😀".utf8), [0x7F], [0xFF], [0xC0, 0xAF], [0xC2, 0x80], [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80],
        [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
        [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x61, 0x80],
    ]

    @Test(arguments: samples)
    func agreesWithTheWholeMessageCheckInAnySplit(bytes: [UInt8]) {
        for split in 0...bytes.count {
            var validator = UTF8StreamValidator()
            let valid = validator.feed(bytes[..<split]) && validator.feed(bytes[split...]) && validator.isAtBoundary
            #expect(valid == Encoding.isValidUTF8(bytes), "split at \(split)")
        }
    }

    /// Long runs of ASCII are skipped a word at a time: a character that starts, ends or is
    /// broken at any offset around those words is still checked.
    @Test func aCharacterAnywhereInALongTextIsChecked() {
        let characters: [[UInt8]] = [Array("é".utf8), Array("✓".utf8), Array("😀".utf8), [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xE2, 0x82]]
        for character in characters {
            for offset in 0...20 {
                let text = [UInt8](repeating: 0x61, count: offset) + character + [UInt8](repeating: 0x62, count: 20 - offset)
                var validator = UTF8StreamValidator()
                let valid = validator.feed(text[...]) && validator.isAtBoundary
                #expect(valid == Encoding.isValidUTF8(text), "\(character) at \(offset)")
            }
        }
    }

    @Test func reportsTheFirstImpossibleByteAtOnce() {
        var validator = UTF8StreamValidator()
        let start = validator.feed(Array("ok ".utf8) + [0xF4])
        #expect(start && !validator.isAtBoundary)
        let next = validator.feed([0x90])  // above U+10FFFF, known before the sequence ends
        #expect(!next)
    }
}

@Suite struct WebSocketFrameDecoderPrefixTests {
    @Test func incompleteFramePrefixShowsWhatHasArrived() throws {
        var decoder = WebSocketFrameDecoder(maxPayload: 1024)
        decoder.append([0x81])
        #expect(decoder.incompleteFramePrefix() == nil)
        decoder.append([0x7E, 0x00, 0xC8] + Array("abc".utf8))  // 200-byte text frame, 3 bytes so far
        let prefix = try #require(decoder.incompleteFramePrefix())
        #expect(prefix.opcode == .text)
        #expect(Array(prefix.payload) == Array("abc".utf8))
        let early = try decoder.next()
        #expect(early == nil)
        decoder.append([UInt8](repeating: 0x61, count: 197) + [0x89, 0x00])
        let frame = try decoder.next()
        #expect(frame?.payload.count == 200)
        let ping = try #require(decoder.incompleteFramePrefix())
        #expect(ping.opcode == .ping && ping.payload.isEmpty)
    }
}
