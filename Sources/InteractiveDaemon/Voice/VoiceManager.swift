import IPCProtocol
import JSONValue
import Network
import Runtime
import VoiceMediaProtocol

/// The voice room of seed 002 (docs/voice.md): a thin shell on the loop around `VoiceCore`,
/// which decides everything. This performs it: the WebSockets to the voice server
/// (`VoiceSignalling`), the media processes (`VoiceMediaProcess`), the timers, the replies to
/// `voice.join`, `voice.leave` and `voice.mute`, the events `voice.state`, `voice.peer` and
/// `voice.talking`, and the status board's `voice` section. Control role for the methods (the
/// router checks); observers see the events and the status.
///
/// Inputs are handled one at a time and in order: what a report causes while an input's effects
/// are performed (a media process that could not start, say) waits for them to be done.
@LoopActor
final class VoiceManager {
    private var core: VoiceCore
    private let bus: EventBus
    private let log: Logger
    private let timers: any TimerScheduler
    /// The viewer's display name now: the default `display` of a join.
    private let viewerDisplayName: () -> String?
    /// TLS for `wss://` voice servers (`caFile`, `insecureTLS`).
    private var tls: TLSOptions
    /// The signalling tasks, run as child tasks of `run()`.
    private let work = ChildTasks()
    private lazy var signalling = VoiceSignalling(work: work) { [weak self] in self?.feed($0) }
    /// Media processes by number, until each was reaped (also after the core let go of it).
    private var processes: [VoiceMediaID: VoiceMediaProcess] = [:]
    private var timerIDs: [VoiceTimer: TimerID] = [:]
    private var replies: [VoiceRequestID: CheckedContinuation<Result<JSONValue, RPCError>, Never>] = [:]
    private var lastRequest = 0
    /// Inputs waiting for the current one's effects.
    private var inbox: [VoiceInput] = []
    private var handling = false
    private var publishedStatus: VoiceStatus?

    init(bus: EventBus, log: Logger, settings: Settings, viewerDisplayName: @escaping () -> String?,
         timers: any TimerScheduler = EventLoop.shared,
         random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.bus = bus
        self.log = log
        self.timers = timers
        self.viewerDisplayName = viewerDisplayName
        tls = TLSOptions(caFile: settings.caFile, insecure: settings.insecureTLS)
        core = VoiceCore(settings: VoiceSettings(settings), random: random)
        bus.setStatus("voice", .null)
    }

    /// Runs the signalling connections' tasks until cancelled.
    func run() async {
        await work.run()
    }

    // MARK: Methods

    /// `voice.join`: the status once the room is joined, or where it stands after `timeoutMs`.
    func join(_ params: VoiceJoinParams) async throws(RPCError) -> JSONValue {
        feed(.viewerDisplayName(viewerDisplayName()))
        return try await request { .join(params, $0) }
    }

    /// `voice.leave`.
    func leave() async throws(RPCError) -> JSONValue {
        try await request { .leave($0) }
    }

    /// `voice.mute`.
    func mute(_ muted: Bool) async throws(RPCError) -> JSONValue {
        try await request { .mute(muted, $0) }
    }

    /// The configuration changed: it applies from the next connection and the next join.
    func settingsChanged(_ settings: Settings) {
        tls = TLSOptions(caFile: settings.caFile, insecure: settings.insecureTLS)
        feed(.settings(VoiceSettings(settings)))
    }

    /// The daemon stops: the room is left (the server told, the media process stopped) and the
    /// media processes are awaited, `limit` at most; those still running then are killed.
    func shutdown(within limit: Duration = .seconds(3)) async {
        if core.room?.state.isActive == true { _ = try? await leave() }
        let running = Array(processes.values)
        guard !running.isEmpty else { return }
        do {
            try await withTimeout(limit, "the voice media processes' end") { @LoopActor in
                for process in running { _ = await process.exited() }
            }
        } catch {
            for process in processes.values { process.kill() }
        }
    }

    private func request(_ input: (VoiceRequestID) -> VoiceInput) async throws(RPCError) -> JSONValue {
        lastRequest += 1
        let id = VoiceRequestID(value: lastRequest)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<JSONValue, RPCError>, Never>) in
            replies[id] = continuation
            feed(input(id))
        }
        return try result.get()
    }

    // MARK: Inputs and effects

    /// Hands `input` to the core and performs its effects, after those of the input being
    /// handled now, if any.
    private func feed(_ input: VoiceInput) {
        inbox.append(input)
        guard !handling else { return }
        handling = true
        while !inbox.isEmpty {
            let next = inbox.removeFirst()
            perform(core.handle(next, now: timers.now))
        }
        handling = false
        if core.status != publishedStatus {
            publishedStatus = core.status
            bus.setStatus("voice", publishedStatus?.json ?? .null)
        }
    }

    private func perform(_ effects: [VoiceEffect]) {
        for effect in effects {
            switch effect {
            case .openSocket(let socket, let url):
                signalling.open(socket, url: url, tls: tls)
            case .closeSocket(let socket):
                signalling.close(socket)
            case .sendJanus(let socket, let request):
                signalling.send(socket, request.text)
            case .startMedia(let id):
                startMedia(id)
            case .sendMedia(let id, let message):
                processes[id]?.send(message)
            case .stopMedia(let id):
                processes[id]?.stop()
            case .state(let event):
                publish(event)
            case .peer(let event):
                publish(event)
            case .talking(let event):
                publish(event)
            case .reply(let request, let result):
                replies.removeValue(forKey: request)?.resume(returning: result)
            case .schedule(let timer, let deadline):
                if let previous = timerIDs[timer] { timers.cancel(previous) }
                timerIDs[timer] = timers.schedule(at: deadline) { [weak self] in
                    guard let self else { return }
                    timerIDs[timer] = nil
                    feed(.timerFired(timer))
                }
            case .cancel(let timer):
                if let previous = timerIDs.removeValue(forKey: timer) { timers.cancel(previous) }
            case .log(let line):
                write(line)
            }
        }
    }

    private func startMedia(_ id: VoiceMediaID) {
        let started = VoiceMediaExecutable.locate().flatMap { executable in
            Result { () throws(VoiceMediaStartError) in
                try VoiceMediaProcess.start(id, executable: executable, report: { [weak self] in self?.feed($0) }, log: log,
                                            timers: timers, ended: { [weak self] in self?.processes[$0] = nil })
            }
        }
        switch started {
        case .success(let process):
            processes[id] = process
            feed(.mediaStarted(id))
        case .failure(let error):
            feed(.mediaExited(id, .notStarted(reason: error.description)))
        }
    }

    // MARK: Events, status and logs

    /// Publishes `event` with the status board's `voice` section as it is now.
    private func publish(_ event: some EventData) {
        publishedStatus = core.status
        bus.publish(event, section: "voice", status: publishedStatus?.json ?? .null)
    }

    private func write(_ line: VoiceLogLine) {
        let priority: LogPriority
        switch line.priority {
        case .debug: priority = .debug
        case .info: priority = .info
        case .notice: priority = .notice
        case .warning: priority = .warning
        case .error: priority = .error
        }
        log.log(priority, line.message, core.room.map { ["INTERACTIVE_VOICE_ROOM": $0.name] } ?? [:])
    }
}
