import Runtime
import VoiceMediaProtocol

/// The shell of the media process: takes each input from its mailbox (the control socket, the
/// signals, GStreamer's threads through `GStreamerEvents`), lets `MediaSession` decide, and
/// performs the actions on the pipeline and the socket. Pinned to the event loop, so its state is
/// touched on one thread only.
actor MediaProcess {
    private let loop: EventLoop
    private let control: ControlChannel
    private let mailbox: Mailbox<MediaSession.Input>
    private let events: GStreamerEvents
    private var session = MediaSession()
    private var pipeline: VoicePipeline?

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    init(control: ControlChannel, mailbox: Mailbox<MediaSession.Input>, loop: EventLoop = .shared) {
        self.loop = loop
        self.control = control
        self.mailbox = mailbox
        events = GStreamerEvents(mailbox: mailbox)
    }

    /// Runs the join to its end; returns the exit status, the pipeline stopped and the socket closed.
    func run() async -> MediaSession.ExitStatus {
        while let input = await mailbox.next() {
            if let status = await handle(input) { return status }
        }
        return await finish(.success)
    }

    private func handle(_ input: MediaSession.Input) async -> MediaSession.ExitStatus? {
        var inputs = [input]
        while !inputs.isEmpty {
            for action in session.handle(inputs.removeFirst()) {
                switch action {
                case .buildPipeline(let start):
                    inputs.append(build(start))
                case .createOffer:
                    pipeline?.createOffer()
                case .setLocalOffer(let sdp):
                    pipeline?.setLocalOffer(sdp: sdp)
                case .setRemoteAnswer(let sdp):
                    pipeline?.setRemoteAnswer(sdp: sdp)
                case .addRemoteCandidate(let mlineIndex, let candidate):
                    pipeline?.addRemoteCandidate(mlineIndex: mlineIndex, candidate: candidate)
                case .setMuted(let muted):
                    pipeline?.setMuted(muted)
                    Log.line(muted ? "muted: the microphone's valve is closed" : "unmuted")
                case .send(let message):
                    log(message)
                    if await !control.send(message) { inputs.append(.controlClosed) }
                case .note(let text):
                    Log.line(text)
                case .exit(let status):
                    return await finish(status)
                }
            }
        }
        return nil
    }

    private func build(_ start: MediaStart) -> MediaSession.Input {
        Log.line("starting: echo cancellation \(start.echoCancel ? "asked for" : "off"), \(start.muted ? "muted" : "unmuted")")
        do {
            let started = try VoicePipeline.start(start, events: events, log: Log.line)
            pipeline = started
            return .pipelineStarted(elements: started.elements)
        } catch {
            return .pipelineUnavailable(reason: error.reason)
        }
    }

    private func finish(_ status: MediaSession.ExitStatus) async -> MediaSession.ExitStatus {
        pipeline?.stop()
        pipeline = nil
        mailbox.finish()
        await control.close()
        Log.line("exiting with status \(status.rawValue)")
        return status
    }

    /// One line per message sent, without the SDP (its ice-pwd is a secret) or the candidates' addresses.
    private func log(_ message: MediaMessage) {
        switch message {
        case .ready(let elements): Log.line("ready (\(elements.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")))")
        case .offer(let sdp): Log.line("offer sent (\(sdp.utf8.count) bytes)")
        case .candidate(.candidate(let mline, _)): Log.line("local candidate sent (m-line \(mline))")
        case .candidate(.completed): Log.line("local candidates complete")
        case .state(let ice, let connection): Log.line("ICE \(ice.rawValue)\(connection.map { ", connection \($0)" } ?? "")")
        case .talking(let talking, let level): Log.line("\(talking ? "talking" : "stopped talking") (level -\(level) dBov)")
        case .unavailable(let reason): Log.line("unavailable: \(reason)")
        case .error(let message): Log.line("error: \(message)")
        }
    }
}
