import VoiceMediaProtocol

/// The media process's one join, as a state machine: it takes what the daemon sent and what the
/// pipeline reported, and returns what to do. It performs nothing itself (`MediaProcess` does).
///
/// start → build the pipeline (`ready`) → webrtcbin asks for negotiation → create the offer →
/// set it locally and send it → the daemon's answer is set remotely → remote candidates (queued
/// until then) are added. Local candidates and state changes go to the daemon as they come.
struct MediaSession {
    /// How the process ends.
    enum ExitStatus: Int32, Equatable {
        case success = 0
        case failure = 1
        /// EX_UNAVAILABLE: the pipeline cannot run here.
        case unavailable = 69
    }

    enum Input: Sendable, Equatable {
        case daemon(DaemonMessage)
        /// The pipeline was built and set playing; `elements` reports the optional ones.
        case pipelineStarted(elements: [String: Bool])
        case pipelineUnavailable(reason: String)
        case negotiationNeeded
        case offerCreated(sdp: String)
        case remoteDescriptionSet
        /// A webrtcbin operation failed (creating the offer, setting a description).
        case negotiationFailed(String)
        case localCandidate(mlineIndex: Int, candidate: String)
        case gatheringComplete
        case iceState(ICEConnectionState)
        case connectionState(String)
        /// The microphone's RMS (dBFS) over the last interval, at the pipeline's running time.
        case level(rmsDecibels: Double, at: Duration)
        case pipelineError(String)
        /// The control socket reached its end or failed.
        case controlClosed
        /// The control socket sent a line that breaks the protocol.
        case protocolViolation(String)
        /// SIGTERM or SIGINT.
        case terminated
    }

    enum Action: Equatable {
        case buildPipeline(MediaStart)
        case createOffer
        case setLocalOffer(sdp: String)
        case setRemoteAnswer(sdp: String)
        case addRemoteCandidate(mlineIndex: Int, candidate: String)
        case setMuted(Bool)
        case send(MediaMessage)
        /// Something worth a log line that changes nothing.
        case note(String)
        /// Tear down the pipeline, close the socket, exit with this status.
        case exit(ExitStatus)
    }

    private enum Phase: Equatable {
        case awaitingStart
        /// Building the pipeline (the `buildPipeline` action is being performed).
        case building
        case awaitingNegotiation
        case creatingOffer
        case awaitingAnswer
        case settingAnswer
        case negotiated
        case ended
    }

    private var phase = Phase.awaitingStart
    private var muted = false
    private var pendingCandidates: [(mlineIndex: Int, candidate: String)] = []
    private var iceState: ICEConnectionState?
    private var connectionState: String?
    private var talking: TalkingDetector

    init(talkingThresholds: TalkingDetector.Thresholds = TalkingDetector.Thresholds()) {
        talking = TalkingDetector(thresholds: talkingThresholds)
    }

    /// True once an `exit` action was returned: every later input is ignored.
    var hasEnded: Bool { phase == .ended }

    mutating func handle(_ input: Input) -> [Action] {
        guard phase != .ended else { return [] }
        switch input {
        case .daemon(let message): return handle(message)
        case .pipelineStarted(let elements):
            guard phase == .building else { return [] }
            phase = .awaitingNegotiation
            return [.send(.ready(elements: elements))]
        case .pipelineUnavailable(let reason):
            return end(.unavailable, sending: .unavailable(reason: reason))
        case .negotiationNeeded:
            // One offer per join: the voice server needs no renegotiation of one audio stream.
            guard phase == .awaitingNegotiation else { return [.note("negotiation needed again: ignored")] }
            phase = .creatingOffer
            return [.createOffer]
        case .offerCreated(let sdp):
            guard phase == .creatingOffer else { return [] }
            phase = .awaitingAnswer
            return [.setLocalOffer(sdp: sdp), .send(.offer(sdp: sdp))]
        case .remoteDescriptionSet:
            guard phase == .settingAnswer else { return [] }
            phase = .negotiated
            defer { pendingCandidates = [] }
            return pendingCandidates.map { .addRemoteCandidate(mlineIndex: $0.mlineIndex, candidate: $0.candidate) }
        case .negotiationFailed(let reason):
            return end(.failure, sending: .error(message: reason))
        case .localCandidate(let mlineIndex, let candidate):
            return [.send(.candidate(.candidate(mlineIndex: mlineIndex, candidate: candidate)))]
        case .gatheringComplete:
            return [.send(.candidate(.completed))]
        case .iceState(let state):
            guard state != iceState else { return [] }
            iceState = state
            let report = Action.send(.state(ice: state, connection: connectionState))
            // libnice gives up only after every pair failed: the join cannot recover by itself.
            if state == .failed { return [report] + end(.failure, sending: .error(message: "ICE failed")) }
            return [report]
        case .connectionState(let state):
            guard state != connectionState else { return [] }
            connectionState = state
            guard let iceState else { return [] }
            return [.send(.state(ice: iceState, connection: state))]
        case .level(let rms, let time):
            let level = TalkingDetector.rfc6464Level(rmsDecibels: rms)
            guard !muted, let change = talking.observe(level: level, at: time) else { return [] }
            return [.send(.talking(change, level: level))]
        case .pipelineError(let message):
            // Before `ready` the pipeline never ran: it is unavailable, not broken.
            if phase == .building { return end(.unavailable, sending: .unavailable(reason: message)) }
            return end(.failure, sending: .error(message: message))
        case .controlClosed:
            return [.note("control socket closed")] + end(.success, sending: nil)
        case .protocolViolation(let reason):
            return [.note("protocol error from the daemon: \(reason)")] + end(.failure, sending: nil)
        case .terminated:
            return end(.success, sending: nil)
        }
    }

    private mutating func handle(_ message: DaemonMessage) -> [Action] {
        switch message {
        case .start(let start):
            guard phase == .awaitingStart else { return [.note("start sent again: ignored")] }
            phase = .building
            muted = start.muted
            return [.buildPipeline(start)]
        case .answer(let sdp):
            guard phase == .awaitingAnswer else { return [.note("answer without an offer waiting for it: ignored")] }
            phase = .settingAnswer
            return [.setRemoteAnswer(sdp: sdp)]
        case .candidate(.candidate(let mlineIndex, let candidate)):
            switch phase {
            case .awaitingStart: return [.note("candidate before start: ignored")]
            case .negotiated: return [.addRemoteCandidate(mlineIndex: mlineIndex, candidate: candidate)]
            default:
                pendingCandidates.append((mlineIndex, candidate))
                return []
            }
        case .candidate(.completed):
            return [.note("the voice server has no more candidates")]
        case .mute(let mute):
            guard phase != .awaitingStart else { return [.note("mute before start: ignored")] }
            guard mute != muted else { return [] }
            muted = mute
            var actions: [Action] = [.setMuted(mute)]
            if mute, talking.silence() { actions.append(.send(.talking(false, level: 127))) }
            return actions
        case .stop:
            return end(.success, sending: nil)
        }
    }

    private mutating func end(_ status: ExitStatus, sending message: MediaMessage?) -> [Action] {
        phase = .ended
        return (message.map { [Action.send($0)] } ?? []) + [.exit(status)]
    }
}
