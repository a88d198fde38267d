import IPCProtocol
import JSONValue

/// `interactivectl status` for people.
struct StatusPrinter {
    let output: Output

    func print(_ status: DaemonStatus) {
        let snapshot = status.json
        let daemon = snapshot["daemon"]
        output.line(output.bold("interactived \(Output.plain(daemon?["version"]))") + output.dim("  boot \(status.bootId)"))
        var connectionText = Output.plain(status.connection.map { .string($0.state) })
        if let error = status.connection?.error { connectionText += " (\(error))" }
        row("Backend", colourState(connectionText))
        if let room = status.room {
            var text = "\(room.mediaId) [\(room.mode.rawValue)] \(colourState(room.state))"
            if let error = room.error { text += " (\(error.name ?? "-"): \(error.message))" }
            row("Room", text)
        } else {
            row("Room", output.dim("none"))
        }
        if let session = status.session, session.loggedIn {
            row("Viewer", "\(session.userId ?? "-") (\(session.displayName ?? "-"))")
        } else {
            row("Viewer", "anonymous")
        }
        if status.overlays.isEmpty {
            row("Overlays", output.dim("none"))
        } else {
            for (index, overlay) in status.overlays.enumerated() {
                row(index == 0 ? "Overlays" : "", "\(overlay.overlayId) \(overlay.kind) timeline \(overlay.timelineId)")
            }
        }
        if let voice = status.voice { row("Voice", VoicePrinter(output: output).summary(voice)) }
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
        output.line("\(output.dim(time)) \(output.dim(seq)) \(type) \(PlaybackEventText.describe(event.type, data) ?? VoicePrinter.describe(event.type, data) ?? Output.pairs(data))")
    }
}
