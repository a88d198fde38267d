import FoundationEssentials
import IPCProtocol
import JSONValue

/// voice join/leave/mute/status: the voice room of seed 002 (docs/voice.md), and how
/// `interactivectl status` and `interactivectl events` show it.
enum VoiceCommands {
    static let all: [Command] = [join, leave, mute, status]

    static let join = Command(
        ["voice", "join"], arguments: "ROOM",
        summary: "Join a voice room with the box's microphone; joining another room leaves the first.",
        details: """
            The reply comes once the room is joined (this box's id and who is in it), or after --timeout while \
            the daemon keeps trying (it then says connecting). The room's pin is read from --pin-file, never \
            from the command line; it is not printed or logged. Needs voiceUrl in the configuration.

            Who joins, leaves and talks: interactivectl events -f --type voice.
            """,
        options: [
            OptionSpec("--muted", "join with the microphone muted (nothing leaves the box until 'voice mute off')"),
            OptionSpec("--pin-file", value: "FILE", "read the room's pin from FILE (trimmed)"),
            OptionSpec("--display", value: "NAME", "the name the others see (default the viewer's display name, else Viewer)"),
            OptionSpec("--timeout", value: "MS", "how long to wait for the room (default 10000); after it the daemon keeps trying"),
        ],
        daemonParamsAreUsage: true
    ) { context throws(CommandFailure) in
        let room = try context.argument(0, "ROOM")
        let timeoutMs = try context.milliseconds("--timeout", default: VoiceJoinParams.defaultTimeoutMs)
        let pin = try context.arguments.value("--pin-file").map { file throws(CommandFailure) in try readPin(file) }
        let params = VoiceJoinParams(room: room, display: context.arguments.value("--display"), muted: context.arguments.flag("--muted"),
                                     pin: pin, timeoutMs: timeoutMs)
        let result = try context.connect().call(params, timeoutMs: timeoutMs + 30_000)
        if context.output.json { return context.output.emit(result.json) }
        switch result.state {
        case .joined:
            let others = max(result.participants.count - 1, 0)
            context.output.line("Voice room \(room) joined as \(result.selfId ?? "-")\(result.muted ? " (muted)" : "") "
                + "with \(others) other participant\(others == 1 ? "" : "s")")
        case .connecting, .reconnecting:
            context.output.line("Voice room \(room): still \(result.state.rawValue) after \(timeoutMs) ms; the daemon keeps trying "
                + "(see 'interactivectl voice status')")
        case .left, .closed, .error:
            throw CommandFailure(status: .daemonError, message: "voice room \(room) is \(result.state.rawValue)", result: result.json)
        }
    }

    static let leave = Command(
        ["voice", "leave"], summary: "Leave the voice room; the media process stops."
    ) { context throws(CommandFailure) in
        let result = try context.connect().call(VoiceLeaveParams())
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Left voice room \(result.room)")
    }

    static let mute = Command(
        ["voice", "mute"], arguments: "on|off",
        summary: "Mute or unmute the microphone: muted, nothing leaves the box and the others see it muted.",
        completion: .words(["on", "off"])
    ) { context throws(CommandFailure) in
        let text = try context.argument(0, "on|off")
        let muted: Bool
        switch text {
        case "on": muted = true
        case "off": muted = false
        default: throw CommandFailure(status: .usage, message: "voice mute takes on or off, not '\(text)'")
        }
        let result = try context.connect().call(VoiceMuteParams(muted: muted))
        if context.output.json { return context.output.emit(result.json) }
        context.output.line("Voice room \(result.room): microphone \(result.muted ? "muted" : "on")")
    }

    static let status = Command(
        ["voice", "status"],
        summary: "Show the voice room: its state, this box's id, and each participant (muted, talking).",
        details: "With --json, prints daemon.status's voice exactly as the daemon returns it (null before any voice join)."
    ) { context throws(CommandFailure) in
        let snapshot = try context.connect().call(DaemonStatusParams())
        if context.output.json { return context.output.emit(snapshot.json["voice"] ?? .null) }
        guard let voice = snapshot.voice else { return context.output.line("No voice room") }
        let printer = VoicePrinter(output: context.output)
        context.output.line(printer.summary(voice))
        for participant in voice.participants {
            context.output.line("  " + printer.participant(participant, isSelf: participant.peerId == voice.selfId))
        }
    }

    /// The pin in `file`, trimmed; a usage error when it cannot be read or is empty.
    private static func readPin(_ file: String) throws(CommandFailure) -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CommandFailure(status: .usage, message: "cannot read --pin-file \(file)")
        }
        let pin = String(decoding: data, as: UTF8.self).trimmingWhitespace()
        guard !pin.isEmpty else { throw CommandFailure(status: .usage, message: "--pin-file \(file) is empty") }
        return pin
    }
}

/// The voice room for people: `voice status`, the Voice row of `status`, and the voice events.
struct VoicePrinter {
    let output: Output

    /// `ROOM joined as ID (muted), 3 participants` or `ROOM error (name: message)`.
    func summary(_ voice: VoiceStatus) -> String {
        var text = "\(voice.room) \(state(voice.state.rawValue))"
        if let selfId = voice.selfId { text += " as \(selfId)" }
        if voice.muted { text += " (muted)" }
        if voice.state == .joined { text += ", \(voice.participants.count) participant\(voice.participants.count == 1 ? "" : "s")" }
        if let error = voice.error { text += " (\(error.name ?? "-"): \(error.message))" }
        return text
    }

    /// `Ana  id 123  muted  talking`; this box is marked `(this box)`.
    func participant(_ participant: VoiceParticipant, isSelf: Bool) -> String {
        var text = output.bold(participant.display ?? "-") + output.dim("  id \(participant.peerId)")
        if isSelf { text += " (this box)" }
        if participant.muted { text += "  muted" }
        if participant.talking { text += "  " + output.green("talking") }
        return text
    }

    /// A one-line description of a `voice.` event's data; nil for other events.
    static func describe(_ type: String, _ data: JSONValue) -> String? {
        switch type {
        case VoiceStateEvent.type:
            guard let event = VoiceStateEvent(data: data) else { return nil }
            var text = "\(event.room) \(event.state.rawValue)"
            if let selfId = event.selfId { text += " as \(selfId)" }
            if event.muted { text += " (muted)" }
            if event.state == .joined { text += ", \(event.participants) participants" }
            if let reason = event.reason { text += " (\(reason.rawValue))" }
            if let error = event.error { text += " (\(error.name ?? "-"): \(error.message))" }
            return text
        case VoicePeerEvent.type:
            guard let event = VoicePeerEvent(data: data) else { return nil }
            var text = "\(event.room) \(event.display ?? "-") (\(event.peerId)) \(event.event.rawValue)"
            if event.muted { text += " muted" }
            if let reason = event.reason { text += " (\(reason.rawValue))" }
            return text
        case VoiceTalkingEvent.type:
            return VoiceTalkingEvent(data: data).map { "\($0.room) \($0.peerId) \($0.talking ? "talks" : "stopped talking")" }
        default:
            return nil
        }
    }

    private func state(_ text: String) -> String {
        switch text {
        case "joined": return output.green(text)
        case "error": return output.red(text)
        case "connecting", "reconnecting": return output.yellow(text)
        default: return text
        }
    }
}
