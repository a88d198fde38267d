import FoundationEssentials
import Glibc
import IPCProtocol
import JSONValue

/// `login`: sends the token, then waits (bounded) for what the backend says about it.
enum LoginCommand {
    static let login = Command(
        ["login"],
        summary: "Log the viewer in. The token is read from FILE, or from standard input; never from the command line.",
        details: """
            On a terminal the token is asked for without echo ("Token (input hidden):"). A live room \
            reconnects so that the backend sees the new viewer; login then waits (up to --timeout) for the \
            backend to accept or refuse the token and says which. Without a live room the backend checks the \
            token only later, and login says so.

            Exit status 1 when the backend refused the token or the room failed; 0 when it accepted it or \
            has not answered in time (the message says which).
            """,
        options: [
            OptionSpec("--user-id", value: "ID", required: true, "the viewer's user id"),
            OptionSpec("--display-name", value: "NAME", "the name shown to others"),
            OptionSpec("--token-file", value: "FILE", "read the token from FILE instead of standard input"),
            OptionSpec("--timeout", value: "MS", "how long to wait for the backend's answer in a live room (default 10000)"),
        ]
    ) { context throws(CommandFailure) in
        guard let userId = context.arguments.value("--user-id") else {
            throw CommandFailure(status: .usage, message: "missing --user-id")
        }
        let timeoutMs = try context.milliseconds("--timeout", default: 10_000)
        let token = try readToken(file: context.arguments.value("--token-file"))
        let params = SessionLoginParams(token: token, userId: userId, displayName: context.arguments.value("--display-name"))
        let connection = try context.connect()
        // Subscribed before the login, so that the room's answer to the new token cannot be missed.
        let subscribed = try connection.call(EventsSubscribeParams(types: [RoomStateEvent.type]))
        let session = try connection.call(params)
        let room = subscribed.snapshot["room"].flatMap(RoomStateEvent.init(data:))
        let live = room.map { $0.mode == .live && $0.state != "left" } ?? false
        let outcome = live ? try waitForRoom(connection, timeoutMs: timeoutMs) : nil
        report(context.output, session: session, room: room, outcome: outcome, timeoutMs: timeoutMs)
        if let outcome, outcome.state == "error" {
            let error = outcome.error
            let refused = error?.name == DaemonErrorName.backendRefused.rawValue
            let what = refused ? "the backend refused the token of \(userId)" : "room \(outcome.mediaId) failed after the login"
            throw CommandFailure(status: .daemonError,
                                 message: "\(what): \(error?.message ?? "-") (\(error?.name ?? "-"))",
                                 result: ["session": session.json, "room": outcome.data])
        }
    }

    /// The room's state once it leaves `joining` after the login, or nil when it did not in time.
    private static func waitForRoom(_ connection: DaemonConnection, timeoutMs: Int) throws(CommandFailure) -> RoomStateEvent? {
        let deadline = MonotonicClock.nowMs() + timeoutMs
        do throws(IPCClientError) {
            while true {
                let remaining = deadline - MonotonicClock.nowMs()
                guard remaining > 0, let event = try connection.client.nextEvent(timeoutMs: remaining) else { return nil }
                if let room = event.decode(RoomStateEvent.self), room.state != "joining" { return room }
            }
        } catch {
            throw DaemonConnection.failure(error)
        }
    }

    private static func report(_ output: Output, session: SessionState, room: RoomStateEvent?, outcome: RoomStateEvent?,
                               timeoutMs: Int) {
        let user = session.userId ?? "-"
        let media = room?.mediaId ?? "-"
        let check: String
        let text: String
        switch (room?.mode, outcome?.state) {
        case (_, "joined"?):
            check = "accepted"
            text = "Logged in as \(user): the backend accepted the token (room \(media) joined)"
        case (_, "error"?):
            return // reported as the failure
        case (_, "left"?):
            check = "unchecked"
            text = "Logged in as \(user); room \(media) was left before the backend answered"
        case (.live?, nil) where room?.state != "left":
            check = "pending"
            text = "Logged in as \(user); the backend has not answered yet (room \(media) still joining after "
                + "\(timeoutMs) ms: see 'interactivectl status')"
        case (.vod?, _) where room?.state != "left":
            check = "unchecked"
            text = "Logged in as \(user); the token is not checked yet: the backend checks it at the room's next request"
        default:
            check = "unchecked"
            text = "Logged in as \(user); the token is not checked yet: the backend checks it when a live room is joined"
        }
        if output.json {
            output.emit(["session": session.json, "token": .string(check), "room": (outcome ?? room)?.data ?? .null])
        } else {
            output.line(text)
        }
    }

    /// The token from a file, a hidden prompt on a terminal, or standard input; trimmed.
    private static func readToken(file: String?) throws(CommandFailure) -> String {
        let text: String
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CommandFailure(status: .usage, message: "cannot read --token-file \(file)")
            }
            text = String(decoding: data, as: UTF8.self)
        } else if isatty(STDIN_FILENO) == 1 {
            guard let typed = Terminal.readHidden(prompt: "Token (input hidden): ") else {
                throw CommandFailure(status: .interrupted, message: "interrupted: no token given")
            }
            text = typed
        } else {
            text = readStandardInput()
        }
        let token = text.trimmingWhitespace()
        guard !token.isEmpty else { throw CommandFailure(status: .usage, message: "the token is empty") }
        return token
    }

    private static func readStandardInput() -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

/// Milliseconds of the monotonic clock, for bounded waits.
enum MonotonicClock {
    static func nowMs() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}
