import IPCProtocol
import JSONValue

/// The player's and the viewer's side of an overlay, for manual use and the demo: overlay
/// loaded|failed|dismiss|answer, confirm. Reports never make interactivectl the overlay's owner.
enum PlayerCommands {
    static let all: [Command] = [overlayLoaded, overlayFailed, overlayDismiss, overlayAnswer, confirm]

    static let overlayLoaded = Command(
        ["overlay", "loaded"], arguments: "ID",
        summary: "Report, on the player's behalf, that the overlay loaded (attached, rendered loaded, then revealed).",
        details: "The first render report of an overlay wins: if one was already recorded, this one is not, and the exit status is 1."
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let connection = try context.connect()
        _ = try connection.call(OverlayAttachedParams(overlayId: overlayId, claim: false))
        let rendered = try connection.call(OverlayRenderedParams(overlayId: overlayId, status: .loaded, claim: false))
        try requireRecorded(rendered, overlayId: overlayId, status: .loaded)
        let show = BridgeMessage(type: BridgeMessageType.show.rawValue, data: [:])
        let bridge = try connection.call(OverlayBridgeParams(overlayId: overlayId, posted: show, claim: false))
        if context.output.json {
            return context.output.emit(["overlayId": .string(overlayId), "status": "loaded", "recorded": true, "revealed": .bool(bridge.handled)])
        }
        context.output.line("\(overlayId): loaded (recorded, revealed)")
    }

    static let overlayFailed = Command(
        ["overlay", "failed"], arguments: "ID",
        summary: "Report, on the player's behalf, that the overlay failed to load.",
        details: "The first render report of an overlay wins: if one was already recorded, this one is not, and the exit status is 1.",
        options: [OptionSpec("--reason", value: "TEXT", "why it failed (default: reported by interactivectl)")]
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let reason = context.arguments.value("--reason") ?? "reported by interactivectl"
        let rendered = try context.connect().call(OverlayRenderedParams(overlayId: overlayId, status: .failed, reason: reason, claim: false))
        try requireRecorded(rendered, overlayId: overlayId, status: .failed)
        if context.output.json { return context.output.emit(["overlayId": .string(overlayId), "status": "failed", "recorded": true]) }
        context.output.line("\(overlayId): failed (recorded)")
    }

    static let overlayDismiss = Command(
        ["overlay", "dismiss"], arguments: "ID",
        summary: "Close the overlay as the viewer would (overlay.hide, reason dismissed)."
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let result = try context.connect().call(OverlayDismissParams(overlayId: overlayId))
        if context.output.json { return context.output.emit(["overlayId": .string(overlayId), "ok": .bool(result.ok)]) }
        context.output.line("\(overlayId): dismissed")
    }

    static let overlayAnswer = Command(
        ["overlay", "answer"], arguments: "ID DATA-JSON",
        summary: "Answer in an overlay as its template would: overlay.bridge with {\"type\":\"INTERACTIVE_ACTION_REPORT\",\"data\":DATA-JSON}.",
        details: """
            DATA-JSON is the template's data, the answer itself (see docs/ipc.md, overlay.bridge). The outcome \
            arrives as events: answer.result, or login.required, fanclub.required, answer.confirm.

            Example: interactivectl overlay answer ov-1a2b3c-1 '{"choice":"A"}'
            """
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let text = try context.argument(1, "DATA-JSON")
        let data: JSONValue
        do {
            data = try JSONValue.parse(text)
        } catch {
            throw CommandFailure(status: .usage, message: "DATA-JSON is not JSON: \(error)")
        }
        let report = BridgeMessage(type: BridgeMessageType.actionReport.rawValue, data: data)
        let result = try context.connect().call(OverlayBridgeParams(overlayId: overlayId, posted: report, claim: false))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Answer sent for \(overlayId); watch 'interactivectl events -f --type answer'")
    }

    static let confirm = Command(
        ["confirm"], arguments: "ID yes|no",
        summary: "Accept or decline the bet deduction the daemon asked about (answer.confirm)."
    ) { context throws(CommandFailure) in
        let overlayId = try context.argument(0, "ID")
        let answer = try context.argument(1, "yes|no")
        guard answer == "yes" || answer == "no" else { throw CommandFailure(status: .usage, message: "say yes or no") }
        let result = try context.connect().call(AnswerConfirmParams(overlayId: overlayId, accept: answer == "yes"))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line(answer == "yes" ? "Bet accepted" : "Bet declined")
    }

    /// The daemon records only an overlay's first render report; a later one is a failure to say so.
    private static func requireRecorded(_ reply: RenderedResult, overlayId: String, status: RenderStatus) throws(CommandFailure) {
        guard !reply.recorded else { return }
        throw CommandFailure(status: .daemonError, message: """
            \(overlayId): '\(status.rawValue)' not recorded: the overlay's first render report (loaded or failed) was \
            already recorded, and the first report wins
            """, result: ["overlayId": .string(overlayId), "status": .string(status.rawValue), "recorded": false])
    }
}
