import Glibc
import IPCProtocol
import JSONValue

/// `events`: the held events, or with -f every new one; with --wait across daemon restarts.
enum EventsCommand {
    static let events = Command(
        ["events"],
        summary: "Print the daemon's events: the recent ones held by the daemon, or with -f every new one as it happens.",
        details: """
            Times are local time with the offset from UTC. With --json each event is printed as the daemon \
            sent it (its time in UTC).

            Without --wait, events -f ends when the daemon stops or restarts and says so (exit status 69). \
            With --wait it waits for the daemon, at the start and whenever it goes away, says so on standard \
            error, and goes on: after a restart with the new boot's events from its start.
            """,
        options: [
            OptionSpec("--follow", short: "f", "keep printing new events until interrupted"),
            OptionSpec("--type", value: "PREFIX", "only events whose type starts with PREFIX (repeatable), e.g. --type overlay."),
            OptionSpec("--since", value: "SEQ", "start after event SEQ of this boot (default: the oldest still held)"),
            OptionSpec("--wait", "wait for the daemon when it cannot be reached, and with -f follow it across restarts"),
        ]
    ) { context throws(CommandFailure) in
        var since = 0
        if let text = context.arguments.value("--since") {
            guard let seq = Int(text), seq >= 0 else { throw CommandFailure(status: .usage, message: "--since needs a whole number") }
            since = seq
        }
        var stream = EventStream(context: context, since: since)
        try stream.run()
    }
}

/// One run of `events`: subscribes, prints, and with --wait subscribes again after the daemon returns.
private struct EventStream {
    let context: CommandContext
    let follow: Bool
    let wait: Bool
    let printer: EventPrinter
    /// Where to resume: the last event printed.
    var bootId: String?
    var seq: Int

    init(context: CommandContext, since: Int) {
        self.context = context
        follow = context.arguments.flag("--follow")
        wait = context.arguments.flag("--wait")
        printer = EventPrinter(output: context.output)
        seq = since
    }

    mutating func run() throws(CommandFailure) {
        var waiting = false
        while true {
            let connection: DaemonConnection
            do {
                connection = try context.connect()
            } catch {
                guard wait, error.status == .unreachable else { throw error }
                if !waiting {
                    waiting = true
                    context.output.note("cannot reach the daemon; waiting for it (Ctrl-C to stop)")
                }
                usleep(250_000)
                continue
            }
            if waiting, bootId != nil { context.output.note("reconnected to the daemon") }
            waiting = false
            do {
                let done = try stream(connection)
                if done { return }
            } catch {
                guard error.status == .unreachable, follow else { throw error }
                guard wait else {
                    throw CommandFailure(status: .unreachable, message: """
                        the daemon closed the connection (it stopped or restarted): events -f stopped; \
                        use --wait to follow it across restarts
                        """)
                }
                context.output.note("the daemon closed the connection (it stopped or restarted); waiting for it to come back")
                waiting = true
            }
        }
    }

    /// Subscribes and prints until the held events are out (true) or, with -f, until the
    /// connection ends (a thrown unreachable failure).
    private mutating func stream(_ connection: DaemonConnection) throws(CommandFailure) -> Bool {
        let types = context.arguments.values("--type")
        let boot = try connection.call(HelloParams(client: "interactivectl")).bootId
        if let bootId, boot != bootId {
            // A new boot: its seqs start again, so everything it still holds is new to us.
            context.output.note("the daemon restarted (boot \(boot)); its events from the start follow")
            seq = 0
        }
        bootId = boot
        let subscribed = try connection.call(EventsSubscribeParams(types: types.isEmpty ? nil : types, since: seq))
        let lastHeld = subscribed.seq
        if !follow && seq >= lastHeld { return true }
        do throws(IPCClientError) {
            while true {
                guard let event = try connection.client.nextEvent(timeoutMs: follow ? 3_600_000 : 500) else {
                    if follow { continue }
                    return true
                }
                printer.print(event)
                if let eventSeq = event.seq { seq = eventSeq }
                if !follow, let eventSeq = event.seq, eventSeq >= lastHeld { return true }
            }
        } catch {
            throw DaemonConnection.failure(error)
        }
    }
}
