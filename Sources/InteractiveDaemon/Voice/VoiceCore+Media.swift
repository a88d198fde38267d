import IPCProtocol
import JSONValue
import VoiceMediaProtocol

/// The media process of the current join: started with the room, given `start`, its offer taken
/// to the server and the answer back, candidates both ways, this box's talking; started again
/// (and the room joined again) when it dies, within `VoiceRestartBudget`.
extension VoiceCore {
    mutating func startMedia(into effects: inout [VoiceEffect]) {
        lastMedia += 1
        let id = VoiceMediaID(value: lastMedia)
        media = VoiceMediaProgress(id: id)
        effects.append(.startMedia(id))
    }

    mutating func stopMedia(into effects: inout [VoiceEffect]) {
        guard let media else { return }
        let wasTalking = selfTalking
        self.media = nil
        effects.append(.stopMedia(media.id))
        publishSelfTalking(wasTalking: wasTalking, into: &effects)
    }

    mutating func mediaStarted(_ id: VoiceMediaID, into effects: inout [VoiceEffect]) {
        guard var media, media.id == id, media.step == .spawning, let room else { return }
        media.step = .starting
        self.media = media
        effects.append(.sendMedia(id, .start(MediaStart(source: settings.source, sink: settings.sink, echoCancel: settings.echoCancel,
                                                        ice: settings.ice, muted: room.muted))))
    }

    mutating func media(_ event: MediaMessage, from id: VoiceMediaID, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard var media, media.id == id else { return }
        switch event {
        case .ready:
            guard media.step == .starting else { return }
            media.step = .ready
            self.media = media
            advance(now: now, into: &effects)
        case .offer(let sdp):
            guard media.offer == nil, !media.offerSent else { return }
            guard sdp.utf8.count <= JanusLimits.sdpBytes else {
                effects.append(.log(.ignored("an offer of \(sdp.utf8.count) bytes from the media process")))
                return
            }
            media.offer = sdp
            self.media = media
            advance(now: now, into: &effects)
        case .candidate(let candidate):
            if media.offerSent, let socket = link.openSocket, let session = link.readySession, let handle = link.attachedHandle {
                trickle(candidate, on: socket, session: session, handle: handle, into: &effects)
            } else if media.localCandidates.count < VoiceMediaProgress.heldCandidates {
                media.localCandidates.append(candidate)
                self.media = media
            }
        case .state(let ice, _):
            effects.append(.log(.mediaState(ice: ice.rawValue)))
        case .talking(let talking, _):
            let wasTalking = selfTalking
            media.talking = talking
            self.media = media
            publishSelfTalking(wasTalking: wasTalking, into: &effects)
        case .unavailable(let reason):
            let reason = PeerText.clipped(reason)
            effects.append(.log(.mediaUnavailable(reason: reason)))
            fail(.daemon(.voiceUnavailable, "voice media cannot run on this box: \(reason)", extra: ["reason": .string(reason)]),
                 into: &effects)
        case .error(let message):
            // The process exits after it; its exit is what restarts it.
            effects.append(.log(.mediaError(PeerText.clipped(message))))
        }
    }

    mutating func mediaExited(_ id: VoiceMediaID, _ exit: MediaExit, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard let media, media.id == id else { return }
        let wasTalking = selfTalking
        self.media = nil
        publishSelfTalking(wasTalking: wasTalking, into: &effects)
        if case .notStarted(let reason) = exit {
            let reason = "cannot start interactived-voice: \(PeerText.clipped(reason))"
            effects.append(.log(.mediaUnavailable(reason: reason)))
            fail(.daemon(.voiceUnavailable, "voice media cannot run on this box: \(reason)", extra: ["reason": .string(reason)]),
                 into: &effects)
            return
        }
        mediaFailed("the media process ended (\(exit))", now: now, into: &effects)
    }

    /// The media failed: the room is joined again with a new process, unless it failed more than
    /// `VoiceRestartBudget.limit` times within a minute (then `error`: the daemon keeps running).
    mutating func mediaFailed(_ what: String, now: ContinuousClock.Instant, into effects: inout [VoiceEffect]) {
        guard let room, room.state.isActive else { return }
        guard restarts.allowsRestart(at: now) else {
            effects.append(.log(.mediaGaveUp(room: room.name, what: what)))
            fail(.daemon(.voiceUnavailable, "the voice media failed more than \(VoiceRestartBudget.limit) times within a minute (\(what))",
                         extra: ["reason": .string(what)]), into: &effects)
            return
        }
        effects.append(.log(.mediaFailed(what: what, restart: restarts.restarts.count)))
        rejoin(now: now, into: &effects)
    }

    /// Janus' answer goes to the process, then the remote candidates that came before it.
    mutating func answer(_ sdp: String, into effects: inout [VoiceEffect]) {
        guard var media, media.offerSent, !media.answered else { return }
        media.answered = true
        let held = media.remoteCandidates
        media.remoteCandidates.removeAll()
        self.media = media
        effects.append(.sendMedia(media.id, .answer(sdp: sdp)))
        for candidate in held { effects.append(.sendMedia(media.id, .candidate(candidate))) }
    }

    mutating func remoteCandidate(_ candidate: JanusCandidate, into effects: inout [VoiceEffect]) {
        guard var media else { return }
        let forMedia: TrickledCandidate
        switch candidate {
        case .candidate(let index, let text): forMedia = .candidate(mlineIndex: index, candidate: text)
        case .completed: forMedia = .completed
        }
        if media.answered {
            effects.append(.sendMedia(media.id, .candidate(forMedia)))
        } else if media.remoteCandidates.count < VoiceMediaProgress.heldCandidates {
            media.remoteCandidates.append(forMedia)
            self.media = media
        }
    }

    /// A local candidate to the server.
    mutating func trickle(_ candidate: TrickledCandidate, on socket: VoiceSocketID, session: UInt64, handle: UInt64,
                          into effects: inout [VoiceEffect]) {
        let janus: JanusCandidate
        switch candidate {
        case .candidate(let index, let text):
            guard text.utf8.count <= JanusLimits.candidateBytes, !text.containsControlCharacters, (0...63).contains(index) else {
                effects.append(.log(.ignored("a bad candidate from the media process")))
                return
            }
            janus = .candidate(mlineIndex: index, candidate: text)
        case .completed:
            janus = .completed
        }
        send(.trickle(session: session, handle: handle, janus), on: socket, into: &effects)
    }
}
