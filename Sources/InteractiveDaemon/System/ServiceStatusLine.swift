import JSONValue

/// The one-line summary the service manager shows (`STATUS=`, `systemctl status`), composed
/// from the status board (what `daemon.status` returns): the room and its mode, the backend
/// connection, the overlays on screen, and what an operator must act on (a restart needed, a
/// rejected configuration file, a damaged store moved aside).
enum ServiceStatusLine {
    /// Sections of the status board the line is made from: only their changes can change it.
    static let sections: Set<String> = ["room", "connection", "overlays", "daemon", "store"]

    /// Longest text taken from one value (an error message from the backend can be long).
    static let valueLimit = 120

    static func compose(_ board: JSONObject) -> String { compose { board[$0] } }

    /// The line from the sections `section` gives (each is asked for at most once).
    static func compose(_ section: (String) -> JSONValue?) -> String {
        var parts: [String] = []
        let room = section("room")
        if let mediaId = room?["mediaId"]?.stringValue {
            let mode = room?["mode"]?.stringValue ?? "live"
            let state = room?["state"]?.stringValue ?? "?"
            var part = "Room \(clean(mediaId)) (\(mode)) \(state)"
            if state == "error", let message = room?["error"]?["message"]?.stringValue { part += ": \(clean(message))" }
            parts.append(part)
        } else {
            parts.append("No room")
        }
        let connectionSection = section("connection")
        let connection = connectionSection?["state"]?.stringValue ?? "idle"
        if connection != "idle" {
            var part = "backend \(connection)"
            if connection == "reconnecting", let attempt = connectionSection?["attempt"]?.intValue, attempt > 0 {
                part += " (attempt \(attempt))"
            }
            parts.append(part)
        }
        let overlays = section("overlays")?.arrayValue ?? []
        if overlays.count == 1, let id = overlays[0]["overlayId"]?.stringValue {
            parts.append("overlay \(clean(id)) on screen")
        } else if overlays.count > 1 {
            parts.append("\(overlays.count) overlays on screen")
        }
        let daemon = section("daemon")
        let restart = (daemon?["restartNeeded"]?.arrayValue ?? []).compactMap(\.stringValue)
        if !restart.isEmpty { parts.append("restart needed to apply \(restart.joined(separator: ", "))") }
        if let rejected = daemon?["configError"]?.stringValue { parts.append("configuration file rejected: \(clean(rejected))") }
        if let store = section("store")?["summary"]?.stringValue { parts.append(clean(store)) }
        return parts.joined(separator: "; ")
    }

    /// One line: control characters become spaces, and the text is cut at `valueLimit`.
    static func clean(_ text: String) -> String {
        // Printable ASCII short enough (an overlay id: the line changes with each overlay shown)
        // is the line as it is, without a look at each scalar's general category.
        if text.utf8.count <= valueLimit, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
        var flat = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        if flat.count > valueLimit { flat = String(flat.prefix(valueLimit - 1)) + "…" }
        return flat
    }
}
