/// Base64 (RFC 4648, with padding), SHA-1 and UTF-8 validation used by the WebSocket handshake
/// and frame codec.
enum Encoding {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func base64(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let value = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(contentsOf: "==".utf8)
        } else if rest == 2 {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// SHA-1 (FIPS 180-4). Only used for the handshake's accept key; written out here so that a
    /// plain `ws://` connection does not need to initialise OpenSSL.
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var message = bytes
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        let bitLength = UInt64(bytes.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: message.count, by: 64) {
            for i in 0..<16 {
                let j = chunk + i * 4
                w[i] = UInt32(message[j]) << 24 | UInt32(message[j + 1]) << 16 | UInt32(message[j + 2]) << 8 | UInt32(message[j + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch i {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let temp = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                e = d
                d = c
                c = b << 30 | b >> 2
                b = a
                a = temp
            }
            h[0] &+= a
            h[1] &+= b
            h[2] &+= c
            h[3] &+= d
            h[4] &+= e
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
    }

    /// The value a server must answer in `Sec-WebSocket-Accept` for `key` (RFC 6455 §4.2.2).
    static func webSocketAccept(for key: String) -> String {
        base64(sha1(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
    }

    /// Whether `bytes` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
    static func isValidUTF8<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}

/// Checks UTF-8 that arrives in pieces (the fragments of a WebSocket text message): the first
/// byte that cannot continue well-formed UTF-8 (no overlongs, no surrogates, nothing above
/// U+10FFFF) is reported at once, as RFC 6455 §8.1 asks ("fail fast").
struct UTF8StreamValidator {
    /// Continuation bytes the current character still needs.
    private var pending = 0
    /// The range the next continuation byte must be in.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the text so far ends on a character boundary.
    var isAtBoundary: Bool { pending == 0 }

    /// Feeds the next bytes; false once the text can no longer be well-formed UTF-8.
    mutating func feed<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        if let valid = bytes.withContiguousStorageIfAvailable({ feed(contiguous: $0) }) { return valid }
        return feed(bytesOneByOne: bytes)
    }

    /// Runs of ASCII between characters are skipped eight bytes at a time (Socket.IO text is
    /// mostly ASCII).
    private mutating func feed(contiguous bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if pending == 0, let base = bytes.baseAddress {
                let raw = UnsafeRawPointer(base)
                while index + 8 <= bytes.count,
                      raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
            }
            let end = min(index + 8, bytes.count)
            guard feed(bytesOneByOne: UnsafeBufferPointer(rebasing: bytes[index..<end])) else { return false }
            index = end
        }
        return true
    }

    private mutating func feed<C: Collection>(bytesOneByOne bytes: C) -> Bool where C.Element == UInt8 {
        for byte in bytes {
            if pending > 0 {
                guard lower <= byte && byte <= upper else { return false }
                lower = 0x80
                upper = 0xBF
                pending -= 1
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: pending = 1
            case 0xE0...0xEF:
                pending = 2
                if byte == 0xE0 { lower = 0xA0 }  // overlong
                if byte == 0xED { upper = 0x9F }  // surrogates
            case 0xF0...0xF4:
                pending = 3
                if byte == 0xF0 { lower = 0x90 }  // overlong
                if byte == 0xF4 { upper = 0x8F }  // above U+10FFFF
            default: return false
            }
        }
        return true
    }
}
