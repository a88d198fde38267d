import IPCProtocol
import JSONValue

/// playback start/error/foreground/stop: the player's side of play tickets, for manual use and
/// tests, and how `interactivectl events` shows the playback events.
enum PlaybackCommands {
    static let all: [Command] = [start, error, foreground, stop]

    static let start = Command(
        words: ["playback", "start"], usage: "playback start FILM EPISODE --union-info X --drm-kek Y [--json]",
        summary: "Start an episode: the daemon asks the backend for its play ticket and prefetches the next ones.",
        details: """
            --union-info X   the device id the player's SDK generated
            --drm-kek Y      the device public key the player's SDK generated
            The reply is the first screen state (loading, or playing with a prefetched ticket); playback.state,
            playback.play and playback.preload events tell the rest: interactivectl events -f --type playback.
            """,
        options: ["--union-info", "--drm-kek"]
    ) { context throws(CommandFailure) in
        let filmId = try context.argument(0, "FILM")
        let episodeText = try context.argument(1, "EPISODE")
        guard let episodeNo = Int(episodeText), episodeNo >= 1 else {
            throw CommandFailure(status: .usage, message: "EPISODE must be a whole number ≥ 1")
        }
        guard let unionInfo = context.arguments.value("--union-info"), let drmKek = context.arguments.value("--drm-kek") else {
            throw CommandFailure(status: .usage, message: "give the SDK's device values: --union-info X --drm-kek Y")
        }
        let result = try context.connect().call("playback.start", [
            "filmId": .string(filmId), "episodeNo": .number(Double(episodeNo)),
            "device": ["unionInfo": .string(unionInfo), "drmKek": .string(drmKek)],
        ])
        if context.output.json { return context.output.emit(result) }
        context.output.line("\(filmId) episode \(episodeNo): \(PlaybackEventText.screen(result))")
    }

    static let error = positionCommand(
        "error", method: "playback.error",
        summary: "Report that the player's SDK failed at POSITION seconds (an expired ticket included): one fresh ticket resumes there."
    )

    static let foreground = positionCommand(
        "foreground", method: "playback.foreground",
        summary: "Report that the player is back from standby at POSITION seconds: a ticket with a minute or less left is replaced."
    )

    static let stop = Command(
        words: ["playback", "stop"], usage: "playback stop [--json]",
        summary: "Stop playback: the daemon forgets the current episode and every prefetched ticket.", details: "", options: []
    ) { context throws(CommandFailure) in
        let result = try context.connect().call("playback.stop")
        if context.output.json { return context.output.emit(result) }
        context.output.line("Playback stopped")
    }

    /// `playback VERB POSITION`: a report at a playback position.
    private static func positionCommand(_ verb: String, method: String, summary: String) -> Command {
        Command(words: ["playback", verb], usage: "playback \(verb) POSITION [--json]", summary: summary, details: "",
                options: []) { context throws(CommandFailure) in
            let text = try context.argument(0, "POSITION")
            guard let position = Double(text), position >= 0, position.isFinite else {
                throw CommandFailure(status: .usage, message: "POSITION must be a number of seconds ≥ 0")
            }
            let result = try context.connect().call(method, ["position": .number(position)])
            if context.output.json { return context.output.emit(result) }
            let refreshing = result["refreshing"] == true ? "; a fresh ticket was requested" : ""
            context.output.line("\(PlaybackEventText.screen(result))\(refreshing)")
        }
    }
}

/// The playback events for people: what the screen shows, what plays, never a ticket's token.
enum PlaybackEventText {
    /// A one-line description of a `playback.` event's data; nil for other events.
    static func describe(_ type: String, _ data: JSONValue) -> String? {
        let episode = "\(Output.plain(data["filmId"])) #\(Output.plain(data["episodeNo"]))"
        switch type {
        case EventType.playbackState:
            return "\(episode) \(screen(data))"
        case EventType.playbackPlay:
            let subtitles = (data["subtitles"]?.arrayValue ?? []).compactMap { $0["lang"]?.stringValue }
            return "\(episode) play vid=\(Output.plain(data["vid"])) from \(Output.plain(data["startAt"])) s, "
                + "subtitles \(subtitles.isEmpty ? "none yet" : subtitles.joined(separator: ",")), "
                + "expires \(Output.plain(data["expiresAt"]))"
        case EventType.playbackPreload:
            return "\(episode) preload vid=\(Output.plain(data["vid"]))"
        default:
            return nil
        }
    }

    /// `loading`, `playing`, `paywall`, or `message "text" (retry|no retry)`.
    static func screen(_ data: JSONValue) -> String {
        guard data["state"] == "message" else { return Output.plain(data["state"]) }
        return "message \"\(Output.plain(data["text"]))\" (\(data["canRetry"] == true ? "retry" : "no retry"))"
    }
}
