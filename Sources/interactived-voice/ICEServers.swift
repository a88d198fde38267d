/// The protocol's `ice` URLs in the forms webrtcbin takes: one `stun://host:port` (its
/// `stun-server` property) and any number of `turn(s)://user:password@host:port` (its
/// `add-turn-server` signal).
///
/// Accepted: `stun:host[:port]`, `stun://host[:port]`, and `turn:`/`turns:` the same way with
/// credentials as `user:password@` before the host (RFC 7065's `?transport=` query is dropped:
/// webrtcbin picks the transport itself). TURN URLs hold secrets: only `description` of the
/// result, which shows no credentials, may be logged.
struct ICEServers: Equatable, CustomStringConvertible {
    var stun: String?
    var turn: [String] = []
    /// URLs that are neither STUN nor TURN, or have no host; ignored.
    var rejectedCount = 0

    init(urls: [String]) {
        for url in urls {
            guard let (scheme, rest) = Self.split(url) else {
                rejectedCount += 1
                continue
            }
            let authority = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let host = authority.split(separator: "@").last.map(String.init) ?? ""
            guard !host.isEmpty, !host.hasPrefix(":") else {
                rejectedCount += 1
                continue
            }
            switch scheme {
            case "stun":
                if stun == nil { stun = "stun://\(authority)" } else { rejectedCount += 1 }
            default:
                turn.append("\(scheme)://\(authority)")
            }
        }
    }

    private static func split(_ url: String) -> (scheme: String, rest: String)? {
        for scheme in ["stun", "turns", "turn"] {
            for prefix in ["\(scheme)://", "\(scheme):"] where url.lowercased().hasPrefix(prefix) {
                return (scheme, String(url.dropFirst(prefix.count)))
            }
        }
        return nil
    }

    var description: String {
        "\(stun == nil ? 0 : 1) STUN, \(turn.count) TURN server(s)" + (rejectedCount > 0 ? ", \(rejectedCount) URL(s) ignored" : "")
    }
}
