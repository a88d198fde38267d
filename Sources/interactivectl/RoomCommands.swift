import Foundation
import JSONValue

/// join, leave, overlays, time, leaderboard, and the player's side for manual use and the demo.
enum RoomCommands {
    static let all: [Command] = [join, leave, overlays, overlayLoaded, overlayFailed, overlayDismiss, overlayAnswer, confirm,
                                 time, predictOpen, leaderboard]

    static let join = Command(
        words: ["join"], usage: "join MEDIA [--vod] [--fanclub] [--timeout MS] [--json]",
        summary: "Join the room of a media: live (the backend pushes overlays) or --vod (overlays follow the player's time).",
        details: """
            --fanclub      the viewer is in this media's fanclub
            --timeout MS   live only: how long to wait for the server room (default 10000); after it the
                           daemon keeps trying and the reply says joining
            """,
        options: ["--vod", "--fanclub", "--timeout"]
    ) { context throws(CommandFailure) in
        let mediaId = try context.argument(0, "MEDIA")
        var params: [String: JSONValue] = [
            "mediaId": .string(mediaId), "mode": context.arguments.flag("--vod") ? "vod" : "live",
            "fanclub": .bool(context.arguments.flag("--fanclub")),
        ]
        var wait = 30_000
        if let timeout = context.arguments.value("--timeout") {
            guard let ms = Int(timeout), ms >= 0 else { throw CommandFailure(status: .usage, message: "--timeout needs milliseconds") }
            params["timeoutMs"] = .number(Double(ms))
            wait = ms + 30_000
        }
        let result = try context.connect().call("room.join", .object(params), timeoutMs: wait)
        if context.output.json { return context.output.emit(result) }
        context.output.line("\(mediaId): \(Output.plain(result["state"]))")
    }

    static let leave = Command(
        words: ["leave"], usage: "leave [--json]", summary: "Leave the room; every overlay is hidden.", details: "", options: []
    ) { context throws(CommandFailure) in
        let result = try context.connect().call("room.leave")
        if context.output.json { return context.output.emit(result) }
        context.output.line("Left \(Output.plain(result["mediaId"]))")
    }

    static let overlays = Command(
        words: ["overlays"], usage: "overlays [--json]", summary: "List the overlays on screen.", details: "", options: []
    ) { context throws(CommandFailure) in
        let list = try context.connect().call("daemon.status")["overlays"] ?? .array([])
        if context.output.json { return context.output.emit(list) }
        let items = list.arrayValue ?? []
        if items.isEmpty { return context.output.line("No overlay on screen") }
        for item in items {
            let placement = item["placement"]
            context.output.line("\(context.output.bold(Output.plain(item["overlayId"]))) \(Output.plain(item["kind"])) "
                + "timeline=\(Output.plain(item["timelineId"])) location=\(Output.plain(placement?["location"])) "
                + "size=\(Output.plain(placement?["widthPct"]))%x\(Output.plain(placement?["heightPct"]))% "
                + "revealed=\(Output.plain(item["revealed"]))")
            context.output.line("  \(Output.plain(item["url"]))")
        }
    }

    static let overlayLoaded = playerReport(
        "loaded", summary: "Report, on the player's behalf, that the overlay loaded (rendered, status loaded)."
    ) { overlayId, connection throws(CommandFailure) in
        _ = try connection.call("overlay.attached", ["overlayId": .string(overlayId), "claim": false])
        _ = try connection.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "loaded", "claim": false])
        _ = try connection.call("overlay.bridge", ["overlayId": .string(overlayId), "claim": false,
                                                   "message": ["type": "INTERACTIVE_SHOW_ANALYTICS", "data": [:]]])
    }

    static let overlayFailed = playerReport(
        "failed", summary: "Report, on the player's behalf, that the overlay failed to load."
    ) { overlayId, connection throws(CommandFailure) in
        _ = try connection.call("overlay.rendered", ["overlayId": .string(overlayId), "status": "failed",
                                                     "reason": "reported by interactivectl", "claim": false])
    }

    static let overlayDismiss = playerReport(
        "dismiss", summary: "Close the overlay as the viewer would (overlay.hide, reason dismissed)."
    ) { overlayId, connection throws(CommandFailure) in
        _ = try connection.call("overlay.dismiss", ["overlayId": .string(overlayId)])
    }

    static let overlayAnswer = Command(
        words: ["overlay", "answer"], usage: "overlay answer ID JSON",
        summary: "Answer in an overlay as its template would (INTERACTIVE_ACTION_REPORT with JSON as data).",
        details: "The outcome arrives as events: answer.result, or login.required, fanclub.required, answer.confirm.\n"
            + "Example: interactivectl overlay answer ov-1a2b3c-1 '{\"answer\":{\"choice\":\"A\"}}'",
        options: []
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let text = try context.argument(1, "JSON")
        let data: JSONValue
        do {
            data = try JSONValue.parse(text)
        } catch {
            throw CommandFailure(status: .usage, message: "JSON is not JSON: \(error)")
        }
        let result = try context.connect().call("overlay.bridge", [
            "overlayId": .string(overlayId), "claim": false, "message": ["type": "INTERACTIVE_ACTION_REPORT", "data": data],
        ])
        if context.output.json { return context.output.emit(result) }
        context.output.line("Answer sent for \(overlayId); watch 'interactivectl events -f --type answer'")
    }

    static let confirm = Command(
        words: ["confirm"], usage: "confirm ID yes|no", summary: "Accept or decline the bet deduction the daemon asked about (answer.confirm).",
        details: "", options: []
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let answer = try context.argument(1, "yes|no")
        guard answer == "yes" || answer == "no" else { throw CommandFailure(status: .usage, message: "say yes or no") }
        _ = try context.connect().call("answer.confirm", ["overlayId": .string(overlayId), "accept": .bool(answer == "yes")])
        if !context.output.json { context.output.line(answer == "yes" ? "Bet accepted" : "Bet declined") }
    }

    static let time = Command(
        words: ["time"], usage: "time SECONDS", summary: "Report the player's playback time (drives a VOD room's overlays).",
        details: "", options: []
    ) { context throws(CommandFailure) in
        let text = try context.argument(0, "SECONDS")
        guard let seconds = Double(text), seconds >= 0 else { throw CommandFailure(status: .usage, message: "SECONDS must be a number ≥ 0") }
        _ = try context.connect().call("player.time", ["seconds": .number(seconds)])
    }

    static let predictOpen = Command(
        words: ["predict", "open"], usage: "predict open TIMELINE",
        summary: "Tap the predict/lucky button of a timeline: its dialog overlay is shown.", details: "", options: []
    ) { context throws(CommandFailure) in
        let timelineId = try context.argument(0, "TIMELINE")
        let result = try context.connect().call("predict.open", ["timelineId": .string(timelineId)])
        if context.output.json { return context.output.emit(result) }
        context.output.line("Dialog \(Output.plain(result["overlayId"])) shown")
    }

    static let leaderboard = Command(
        words: ["leaderboard"], usage: "leaderboard MEDIA [--json]", summary: "Print the leaderboard page's URL for a media.",
        details: "", options: []
    ) { context throws(CommandFailure) in
        let mediaId = try context.argument(0, "MEDIA")
        let result = try context.connect().call("leaderboard.url", ["mediaId": .string(mediaId)])
        if context.output.json { return context.output.emit(result) }
        context.output.line(Output.plain(result["url"]))
    }

    /// `overlay VERB ID`: a report made on a player's behalf, without becoming the overlay's owner.
    private static func playerReport(
        _ verb: String, summary: String,
        _ report: @escaping @Sendable (String, DaemonConnection) throws(CommandFailure) -> Void
    ) -> Command {
        Command(words: ["overlay", verb], usage: "overlay \(verb) ID", summary: summary, details: "", options: []) { context throws(CommandFailure) in
            let overlayId = try context.argument(0, "ID")
            try report(overlayId, try context.connect())
            if !context.output.json { context.output.line("\(overlayId): \(verb)") }
        }
    }
}
