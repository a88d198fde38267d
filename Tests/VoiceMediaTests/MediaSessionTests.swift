import Testing
import VoiceMediaProtocol
@testable import interactived_voice

@Suite struct MediaSessionTests {
    private let start = MediaStart(source: "audiotestsrc is-live=true", sink: "fakesink", echoCancel: false, ice: [], muted: false)

    /// A session through start, ready, the offer and the answer.
    private func negotiated() -> MediaSession {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        _ = session.handle(.pipelineStarted(elements: ["webrtcdsp": false]))
        _ = session.handle(.negotiationNeeded)
        _ = session.handle(.offerCreated(sdp: "offer"))
        _ = session.handle(.daemon(.answer(sdp: "answer")))
        _ = session.handle(.remoteDescriptionSet)
        return session
    }

    @Test func startBuildsThenReadyThenOneOffer() {
        var session = MediaSession()
        #expect(session.handle(.daemon(.start(start))) == [.buildPipeline(start)])
        #expect(session.handle(.pipelineStarted(elements: ["webrtcdsp": true])) == [.send(.ready(elements: ["webrtcdsp": true]))])
        #expect(session.handle(.negotiationNeeded) == [.createOffer])
        #expect(session.handle(.offerCreated(sdp: "v=0")) == [.setLocalOffer(sdp: "v=0"), .send(.offer(sdp: "v=0"))])
        #expect(session.handle(.negotiationNeeded) == [.note("negotiation needed again: ignored")])
    }

    @Test func negotiationNeededBeforeReadyWaitsForNothing() {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        // webrtcbin may ask while the pipeline starts: the shell feeds `pipelineStarted` first.
        #expect(session.handle(.pipelineStarted(elements: [:])) == [.send(.ready(elements: [:]))])
        #expect(session.handle(.negotiationNeeded) == [.createOffer])
    }

    @Test func remoteCandidatesWaitForTheAnswer() {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        _ = session.handle(.pipelineStarted(elements: [:]))
        _ = session.handle(.negotiationNeeded)
        _ = session.handle(.offerCreated(sdp: "offer"))
        #expect(session.handle(.daemon(.candidate(.candidate(mlineIndex: 0, candidate: "c1")))).isEmpty)
        #expect(session.handle(.daemon(.answer(sdp: "answer"))) == [.setRemoteAnswer(sdp: "answer")])
        #expect(session.handle(.daemon(.candidate(.candidate(mlineIndex: 0, candidate: "c2")))).isEmpty)
        #expect(session.handle(.remoteDescriptionSet) == [.addRemoteCandidate(mlineIndex: 0, candidate: "c1"),
                                                          .addRemoteCandidate(mlineIndex: 0, candidate: "c2")])
        #expect(session.handle(.daemon(.candidate(.candidate(mlineIndex: 0, candidate: "c3")))) == [.addRemoteCandidate(mlineIndex: 0, candidate: "c3")])
    }

    @Test func anAnswerWithoutAnOfferIsIgnored() {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        #expect(session.handle(.daemon(.answer(sdp: "a"))) == [.note("answer without an offer waiting for it: ignored")])
        var negotiatedSession = negotiated()
        #expect(negotiatedSession.handle(.daemon(.answer(sdp: "again"))) == [.note("answer without an offer waiting for it: ignored")])
    }

    @Test func messagesBeforeStartAreIgnoredButStopEnds() {
        var session = MediaSession()
        #expect(session.handle(.daemon(.mute(true))) == [.note("mute before start: ignored")])
        #expect(session.handle(.daemon(.candidate(.candidate(mlineIndex: 0, candidate: "c")))) == [.note("candidate before start: ignored")])
        #expect(session.handle(.daemon(.stop)) == [.exit(.success)])
        #expect(session.hasEnded)
    }

    @Test func aSecondStartIsIgnored() {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        #expect(session.handle(.daemon(.start(start))) == [.note("start sent again: ignored")])
    }

    @Test func localCandidatesAndTheirEndGoToTheDaemon() {
        var session = negotiated()
        #expect(session.handle(.localCandidate(mlineIndex: 0, candidate: "candidate:1")) == [.send(.candidate(.candidate(mlineIndex: 0, candidate: "candidate:1")))])
        #expect(session.handle(.gatheringComplete) == [.send(.candidate(.completed))])
    }

    @Test func statesAreSentOncePerChange() {
        var session = negotiated()
        #expect(session.handle(.connectionState("connecting")).isEmpty)
        #expect(session.handle(.iceState(.checking)) == [.send(.state(ice: .checking, connection: "connecting"))])
        #expect(session.handle(.iceState(.checking)).isEmpty)
        #expect(session.handle(.connectionState("connected")) == [.send(.state(ice: .checking, connection: "connected"))])
        #expect(session.handle(.iceState(.connected)) == [.send(.state(ice: .connected, connection: "connected"))])
    }

    @Test func iceFailedEndsTheJoinWithAnError() {
        var session = negotiated()
        #expect(session.handle(.iceState(.failed)) == [.send(.state(ice: .failed, connection: nil)), .send(.error(message: "ICE failed")), .exit(.failure)])
        #expect(session.handle(.iceState(.connected)).isEmpty)
    }

    @Test func aPipelineErrorBeforeReadyIsUnavailableAfterItAnError() {
        var building = MediaSession()
        _ = building.handle(.daemon(.start(start)))
        #expect(building.handle(.pipelineError("alsasrc0: Could not open audio device")) ==
            [.send(.unavailable(reason: "alsasrc0: Could not open audio device")), .exit(.unavailable)])
        var running = negotiated()
        #expect(running.handle(.pipelineError("boom")) == [.send(.error(message: "boom")), .exit(.failure)])
    }

    @Test func anUnavailablePipelineExits69() {
        var session = MediaSession()
        _ = session.handle(.daemon(.start(start)))
        #expect(session.handle(.pipelineUnavailable(reason: "missing element webrtcbin")) ==
            [.send(.unavailable(reason: "missing element webrtcbin")), .exit(.unavailable)])
        #expect(MediaSession.ExitStatus.unavailable.rawValue == 69)
    }

    @Test func aRefusedOfferOrAnswerIsAnError() {
        var session = negotiated()
        #expect(session.handle(.negotiationFailed("the voice server's answer was refused: x")) ==
            [.send(.error(message: "the voice server's answer was refused: x")), .exit(.failure)])
    }

    @Test func theEndOfTheControlSocketOrSIGTERMExitsZero() {
        var closed = negotiated()
        #expect(closed.handle(.controlClosed) == [.note("control socket closed"), .exit(.success)])
        var terminated = negotiated()
        #expect(terminated.handle(.terminated) == [.exit(.success)])
        var violated = negotiated()
        #expect(violated.handle(.protocolViolation("a line is not JSON")) == [.note("protocol error from the daemon: a line is not JSON"), .exit(.failure)])
    }

    @Test func talkingIsReportedWithHysteresisAndNeverWhileMuted() {
        var session = negotiated()
        // -9 dBFS is level 9: loud; three measurements 100 ms apart make the 200 ms attack.
        #expect(session.handle(.level(rmsDecibels: -9, at: .milliseconds(0))).isEmpty)
        #expect(session.handle(.level(rmsDecibels: -9, at: .milliseconds(100))).isEmpty)
        #expect(session.handle(.level(rmsDecibels: -9, at: .milliseconds(200))) == [.send(.talking(true, level: 9))])
        #expect(session.handle(.daemon(.mute(true))) == [.setMuted(true), .send(.talking(false, level: 127))])
        #expect(session.handle(.level(rmsDecibels: -9, at: .milliseconds(300))).isEmpty)
        #expect(session.handle(.level(rmsDecibels: -9, at: .milliseconds(900))).isEmpty)
        #expect(session.handle(.daemon(.mute(true))).isEmpty)
        #expect(session.handle(.daemon(.mute(false))) == [.setMuted(false)])
    }

    @Test func startingMutedNeedsNoMuteAction() {
        var session = MediaSession()
        let muted = MediaStart(source: "s", sink: "k", echoCancel: false, ice: [], muted: true)
        #expect(session.handle(.daemon(.start(muted))) == [.buildPipeline(muted)])
        #expect(session.handle(.daemon(.mute(true))).isEmpty)
        #expect(session.handle(.daemon(.mute(false))) == [.setMuted(false)])
    }

    @Test func afterTheEndNothingIsDone() {
        var session = negotiated()
        _ = session.handle(.daemon(.stop))
        #expect(session.handle(.localCandidate(mlineIndex: 0, candidate: "c")).isEmpty)
        #expect(session.handle(.daemon(.mute(true))).isEmpty)
        #expect(session.handle(.controlClosed).isEmpty)
    }
}
