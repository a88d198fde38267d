import IPCProtocol
import JSONValue

/// `interactivectl status` for people.
struct StatusPrinter {
    let output: Output

    func print(_ snapshot: JSONValue) {
        let daemon = snapshot["daemon"]
        output.line(output.bold("interactived \(Output.plain(daemon?["version"]))") + output.dim("  boot \(Output.plain(snapshot["bootId"]))"))
        let connection = snapshot["connection"]
        var connectionText = Output.plain(connection?["state"])
        if let error = connection?["error"], !error.isNull { connectionText += " (\(Output.plain(error)))" }
        row("Backend", colourState(connectionText))
        if let room = snapshot["room"], !room.isNull {
            var text = "\(Output.plain(room["mediaId"])) [\(Output.plain(room["mode"]))] \(colourState(Output.plain(room["state"])))"
            if let error = room["error"], !error.isNull { text += " (\(Output.plain(error["name"])): \(Output.plain(error["message"])))" }
            row("Room", text)
        } else {
            row("Room", output.dim("none"))
        }
        let session = snapshot["session"]
        if session?["loggedIn"] == true {
            row("Viewer", "\(Output.plain(session?["userId"])) (\(Output.plain(session?["displayName"])))")
        } else {
            row("Viewer", "anonymous")
        }
        let overlays = snapshot["overlays"]?.arrayValue ?? []
        if overlays.isEmpty {
            row("Overlays", output.dim("none"))
        } else {
            for (index, overlay) in overlays.enumerated() {
                row(index == 0 ? "Overlays" : "", "\(Output.plain(overlay["overlayId"])) \(Output.plain(overlay["kind"])) timeline \(Output.plain(overlay["timelineId"]))")
            }
        }
        if let tracking = snapshot["tracking"], !tracking.isNull { row("Tracking", Output.pairs(tracking)) }
        let config = snapshot["config"]
        row("Config", ["environment", "tenant", "os", "socketUrl", "apiUrl"].map { "\($0)=\(Output.plain(config?[$0]))" }.joined(separator: " "))
        if let moved = daemon?["store"]?["corruptMovedTo"], !moved.isNull {
            row("Store", output.red("damaged store moved to \(Output.plain(moved))"))
        }
        if let problem = snapshot["store"]?["problem"], !problem.isNull {
            let kept = snapshot["store"]?["persistent"] == false ? "; in memory, nothing kept across a restart" : ""
            row("Store", output.red("\(Output.plain(problem))\(kept)"))
        }
    }

    private func row(_ label: String, _ value: String) {
        output.line("\(output.bold(Output.padded(label, 9))) \(value)")
    }

    private func colourState(_ text: String) -> String {
        if text.hasPrefix("connected") || text.hasPrefix("joined") { return output.green(text) }
        if text.hasPrefix("error") || text.hasPrefix("disconnected") { return output.red(text) }
        if text.hasPrefix("connecting") || text.hasPrefix("reconnecting") || text.hasPrefix("joining") { return output.yellow(text) }
        return text
    }
}

/// `interactivectl events` for people: one line per event.
struct EventPrinter {
    let output: Output

    func print(_ event: EventEnvelope) {
        if output.json {
            return output.emit(event.params)
        }
        let time = EventTime.local(event.time)
        let seq = event.seq.map { "#\($0)" } ?? "  "
        let type = event.type == EventType.eventsLagged ? output.red(event.type) : output.bold(event.type)
        // The backend's raw payload is long and repeats the other fields: --json has it.
        var data = event.data
        if case .object(var members) = data {
            members.removeValue(forKey: "raw")
            data = .object(members)
        }
        output.line("\(output.dim(time)) \(output.dim(seq)) \(type) \(PlaybackEventText.describe(event.type, data) ?? Output.pairs(data))")
    }
}
