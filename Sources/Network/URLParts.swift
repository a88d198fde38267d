/// An absolute URL split into what a client needs to connect and ask: the scheme, the host, the
/// port and the request target. The HTTP client and the Socket.IO client read their URLs with it.
/// `userinfo@` is refused and a fragment is dropped.
public struct URLParts: Sendable, Equatable {
    /// Lowercased.
    public var scheme: String
    /// Host name or IP literal, without the brackets of an IPv6 literal.
    public var host: String
    /// nil when the URL names none (the scheme's default applies).
    public var port: Int?
    /// Path and query as written, without the fragment; empty when the URL has neither.
    public var target: Substring

    /// Why a text is not an absolute URL with a host.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case noScheme, userInformation, unclosedIPv6Literal, badPort, noHost

        public var description: String {
            switch self {
            case .noScheme: return "no scheme"
            case .userInformation: return "user information is not supported"
            case .unclosedIPv6Literal: return "unclosed IPv6 literal"
            case .badPort: return "bad port"
            case .noHost: return "no host"
            }
        }
    }

    public init(parsing text: String) throws(Problem) {
        guard let schemeEnd = text.firstRange(of: "://") else { throw .noScheme }
        scheme = text[..<schemeEnd.lowerBound].lowercased()
        var rest = text[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        target = rest[authorityEnd...]
        guard !authority.contains("@") else { throw .userInformation }
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .unclosedIPv6Literal }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .badPort }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = String(authority[..<colon])
            portText = authority[authority.index(after: colon)...]
        } else {
            host = String(authority)
        }
        guard !host.isEmpty else { throw .noHost }
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw .badPort }
            port = value
        } else {
            port = nil
        }
    }

    /// The value of an HTTP `Host` header: the host (an IPv6 literal in brackets), and the port
    /// unless it is the scheme's default.
    public static func hostHeader(host: String, port: Int, defaultPort: Int) -> String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }
}

/// Percent-encoding of URL components: every byte but the unreserved ones (RFC 3986 §2.3).
public enum PercentEncoding {
    public static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `k=v&k=v` with both sides encoded, in the given order.
    public static func query(_ pairs: [(String, String)]) -> String {
        var out: [UInt8] = []
        appendQuery(pairs, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `k=v&k=v` with both sides encoded, in the given order.
    public static func appendQuery(_ pairs: [(String, String)], to out: inout [UInt8]) {
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(name, to: &out)
            out.append(UInt8(ascii: "="))
            append(value, to: &out)
        }
    }

    /// Appends `text`, encoded.
    public static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            // Names and values are mostly unreserved already: then they go in one copy.
            guard !bytes.allSatisfy(isUnreserved) else { return out.append(contentsOf: bytes) }
            for byte in bytes {
                if isUnreserved(byte) {
                    out.append(byte)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(hexDigit(byte >> 4))
                    out.append(hexDigit(byte & 0x0F))
                }
            }
        }
    }

    /// The upper-case hex digit of a value from 0 to 15.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
