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
        let result = try context.connect().call(PlaybackStartParams(filmId: filmId, episodeNo: episodeNo,
                                                                    device: PlaybackDevice(unionInfo: unionInfo, drmKek: drmKek)))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("\(filmId) episode \(episodeNo): \(PlaybackEventText.screen(result.screen))")
    }

    static let error = positionCommand(
        "error", params: { PlaybackErrorParams(position: $0) },
        summary: "Report that the player's SDK failed at POSITION seconds (an expired ticket included): one fresh ticket resumes there."
    )

    static let foreground = positionCommand(
        "foreground", params: { PlaybackForegroundParams(position: $0) },
        summary: "Report that the player is back from standby at POSITION seconds: a ticket with a minute or less left is replaced."
    )

    static let stop = Command(
        words: ["playback", "stop"], usage: "playback stop [--json]",
        summary: "Stop playback: the daemon forgets the current episode and every prefetched ticket.", details: "", options: []
    ) { context throws(CommandFailure) in
        let result = try context.connect().call(PlaybackStopParams())
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Playback stopped")
    }

    /// `playback VERB POSITION`: a report at a playback position.
    private static func positionCommand<Params: MethodParams>(_ verb: String, params: @escaping @Sendable (Double) -> Params,
                                                              summary: String) -> Command where Params.Result == PlaybackResult {
        Command(words: ["playback", verb], usage: "playback \(verb) POSITION [--json]", summary: summary, details: "",
                options: []) { context throws(CommandFailure) in
            let text = try context.argument(0, "POSITION")
            guard let position = Double(text), position >= 0, position.isFinite else {
                throw CommandFailure(status: .usage, message: "POSITION must be a number of seconds ≥ 0")
            }
            let result = try context.connect().call(params(position))
            if context.output.json { return context.output.emit(result.json) }
            let refreshing = result.refreshing == true ? "; a fresh ticket was requested" : ""
            context.output.line("\(PlaybackEventText.screen(result.screen))\(refreshing)")
        }
    }
}

/// The playback events for people: what the screen shows, what plays, never a ticket's token.
enum PlaybackEventText {
    /// A one-line description of a `playback.` event's data; nil for other events.
    static func describe(_ type: String, _ data: JSONValue) -> String? {
        let episode = "\(Output.plain(data["filmId"])) #\(Output.plain(data["episodeNo"]))"
        switch type {
        case PlaybackStateEvent.type:
            return PlaybackStateEvent(data: data).map { "\(episode) \(screen($0))" }
        case PlaybackPlayEvent.type:
            guard let play = PlaybackPlayEvent(data: data) else { return nil }
            let subtitles = play.subtitles.compactMap { $0["lang"]?.stringValue }
            return "\(episode) play vid=\(play.vid) from \(Output.plain(.number(play.startAt))) s, "
                + "subtitles \(subtitles.isEmpty ? "none yet" : subtitles.joined(separator: ",")), "
                + "expires \(play.expiresAt)"
        case PlaybackPreloadEvent.type:
            return PlaybackPreloadEvent(data: data).map { "\(episode) preload vid=\($0.vid)" }
        default:
            return nil
        }
    }

    /// `loading`, `playing`, `paywall`, or `message "text" (code, retry|no retry)`; `null` before any.
    static func screen(_ state: PlaybackStateEvent) -> String {
        switch state.screen {
        case nil: return Output.plain(.null)
        case .loading?: return "loading"
        case .playing?: return "playing"
        case .paywall?: return "paywall"
        case .message(let text, let canRetry, let code)?: return "message \"\(text)\" (\(code.rawValue), \(canRetry ? "retry" : "no retry"))"
        }
    }
}
