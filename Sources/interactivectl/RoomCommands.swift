import IPCProtocol
import JSONValue

/// join, leave, overlays, time, predict open, leaderboard.
enum RoomCommands {
    static let all: [Command] = [join, leave, overlays, time, predictOpen, leaderboard]

    static let join = Command(
        ["join"], arguments: "MEDIA",
        summary: "Join the room of a media: live (the backend pushes overlays) or --vod (overlays follow the player's time).",
        options: [
            OptionSpec("--vod", "join the VOD room (overlays at scenario times, driven by 'interactivectl time')"),
            OptionSpec("--fanclub", "the viewer is in this media's fanclub"),
            OptionSpec("--timeout", value: "MS", """
                live only: how long to wait for the server room (default 10000); after it the daemon keeps \
                trying and the reply says joining
                """),
        ]
    ) { context throws(CommandFailure) in
        let mediaId = try context.argument(0, "MEDIA")
        var params = RoomJoinParams(mediaId: mediaId, mode: context.arguments.flag("--vod") ? .vod : .live,
                                    fanclub: context.arguments.flag("--fanclub"))
        var wait = 30_000
        if context.arguments.value("--timeout") != nil {
            let ms = try context.milliseconds("--timeout", default: RoomJoinParams.defaultTimeoutMs)
            params.timeoutMs = ms
            wait = ms + 30_000
        }
        let result = try context.connect().call(params, timeoutMs: wait)
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("\(mediaId): \(result.state)")
    }

    static let leave = Command(
        ["leave"], summary: "Leave the room (also one in error); every overlay is hidden."
    ) { context throws(CommandFailure) in
        let result = try context.connect().call(RoomLeaveParams())
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Left \(result.mediaId)")
    }

    static let overlays = Command(["overlays"], summary: "List the overlays on screen.") { context throws(CommandFailure) in
        let status = try context.connect().call(DaemonStatusParams())
        if context.output.json { return context.output.emit(status.json["overlays"] ?? .array([])) }
        if status.overlays.isEmpty { return context.output.line("No overlay on screen") }
        for item in status.overlays {
            let placement = item.placement
            context.output.line("\(context.output.bold(item.overlayId)) \(item.kind) "
                + "timeline=\(item.timelineId) location=\(placement.location) "
                + "size=\(Output.plain(.number(placement.widthPct)))%x\(Output.plain(.number(placement.heightPct)))% "
                + "revealed=\(item.revealed)")
            context.output.line("  \(item.url)")
        }
    }

    static let time = Command(
        ["time"], arguments: "SECONDS", summary: "Report the player's playback time (drives a VOD room's overlays)."
    ) { context throws(CommandFailure) in
        let text = try context.argument(0, "SECONDS")
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
            throw CommandFailure(status: .usage, message: "SECONDS must be a number ≥ 0")
        }
        let result = try context.connect().call(PlayerTimeParams(seconds: seconds))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Playback time \(Output.plain(.number(result.seconds))) s reported")
    }

    static let predictOpen = Command(
        ["predict", "open"], arguments: "TIMELINE",
        summary: "Tap the predict/lucky button of a timeline: its dialog overlay is shown."
    ) { context throws(CommandFailure) in
        let timelineId = try context.argument(0, "TIMELINE")
        let result = try context.connect().call(PredictOpenParams(timelineId: timelineId))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Dialog \(result.overlayId) shown")
    }

    static let leaderboard = Command(
        ["leaderboard"], arguments: "MEDIA", summary: "Print the leaderboard page's URL for a media."
    ) { context throws(CommandFailure) in
        let mediaId = try context.argument(0, "MEDIA")
        let result = try context.connect().call(LeaderboardURLParams(mediaId: mediaId))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line(result.url)
    }
}
