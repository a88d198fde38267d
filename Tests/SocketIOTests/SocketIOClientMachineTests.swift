import JSONValue
import Testing
@testable import SocketIO

/// The client's decisions alone, with an injected clock: attempts and the reconnection schedule,
/// acks and their timeouts, the offline buffer, the heartbeat's proof of carriage, disconnecting.
@Suite struct SocketIOClientMachineTests {
    let t0 = ContinuousClock.now
    static let open = #"0{"sid":"e","upgrades":[],"pingInterval":1000,"pingTimeout":500,"maxPayload":1000}"#

    func configuration(reconnect: ReconnectPolicy = ReconnectPolicy(baseMs: 100, capMs: 1000, factor: 2, stableAfterMs: 5000),
                       emitBufferLimit: Int = 256, awaitedAckLimit: Int = 1024) -> SocketIOConfiguration {
        SocketIOConfiguration(url: "http://127.0.0.1:3000", reconnect: reconnect, connectTimeout: .seconds(5), emitBufferLimit: emitBufferLimit,
                              awaitedAckLimit: awaitedAckLimit)
    }

    /// Runs an attempt up to the CONNECT reply; returns the actions of the reply.
    func connect(_ machine: inout SocketIOClientMachine, at now: ContinuousClock.Instant, sid: String = "s1") throws -> [SocketIOClientMachine.Action] {
        let start = machine.isRunning ? [] : machine.connect(now: now)
        let epoch = try #require(machine.openingEpoch)
        if !start.isEmpty {
            #expect(start.contains(.openTransport(epoch: epoch, endpoint: Endpoint(secure: false, host: "127.0.0.1", port: 3000, path: "/", query: nil))))
            #expect(start.contains(.schedule(.attempt, at: now + .seconds(5))))
        }
        let request = machine.transportOpened(epoch: epoch, credentials: SocketIOCredentials(auth: ["token": "t"]), now: now).written
        let opened = machine.received(FakeServer.accept(request) + FakeServer.text(Self.open), now: now)
        #expect(FakeServer.clientTexts(opened.written) == [#"40{"token":"t"}"#])
        return machine.received(FakeServer.text(#"40{"sid":"\#(sid)"}"#), now: now)
    }

    @Test func anAttemptConnectsAndFlushesTheBuffer() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try machine.emit("early", [1], attachments: [], policy: .buffer, now: t0)
        let actions = try connect(&machine, at: t0)
        #expect(actions.published == [.connected(socketId: "s1")])
        #expect(actions.contains(.cancel(.attempt)))
        #expect(FakeServer.clientTexts(actions.written) == [#"42["early",1]"#])
        #expect(machine.isConnected && machine.socketId == "s1")
    }

    @Test func failedAttemptsBackOffWithJitterUpToTheCap() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 9)
        var now = t0
        _ = machine.connect(now: now)
        var ceilings: [Duration] = []
        for attempt in 1...6 {
            let epoch = try #require(machine.openingEpoch)
            let failed = machine.transportFailed(epoch: epoch, error: .connectFailed("refused"), now: now)
            guard case .reconnecting(let next, let delay, let error)? = failed.published.last else {
                Issue.record("no reconnecting state: \(failed)")
                return
            }
            #expect(next == attempt + 1 && error == .connectFailed("refused"))
            ceilings.append(.milliseconds(min(1000, 100 << (attempt - 1))))
            #expect(delay <= ceilings[attempt - 1])
            #expect(failed.contains(.schedule(.retry, at: now + delay)))
            #expect(machine.timerFired(.retry, now: now + delay - .milliseconds(1)).isEmpty || delay == .zero)
            now += delay
            #expect(machine.timerFired(.retry, now: now).published == [.connecting(attempt: attempt + 1)])
        }
        // A stale transport result of an old attempt changes nothing.
        #expect(machine.transportFailed(epoch: 1, error: .connectFailed("old"), now: now).isEmpty)
    }

    @Test func aStableConnectionResetsTheSchedule() throws {
        var machine = SocketIOClientMachine(configuration: configuration(reconnect: ReconnectPolicy(baseMs: 100, capMs: 100_000, factor: 10, stableAfterMs: 5000)), seed: 3)
        _ = machine.connect(now: t0)
        for _ in 0..<3 {
            let epoch = try #require(machine.openingEpoch)
            _ = machine.transportFailed(epoch: epoch, error: .connectFailed("x"), now: t0)
            _ = machine.timerFired(.retry, now: t0 + .seconds(200))
        }
        _ = try connect(&machine, at: t0 + .seconds(200))
        // Lost after 6 s: stable, so the next delay is drawn from [0, baseMs] again.
        let lost = machine.transportEnded(nil, now: t0 + .seconds(206))
        guard case .reconnecting(1, let delay, _)? = lost.published.last else {
            Issue.record("\(lost)")
            return
        }
        #expect(delay <= .milliseconds(100))
    }

    @Test func anAttemptThatTakesTooLongTimesOut() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = machine.connect(now: t0)
        let epoch = try #require(machine.openingEpoch)
        _ = machine.transportOpened(epoch: epoch, credentials: SocketIOCredentials(), now: t0)
        #expect(machine.timerFired(.attempt, now: t0 + .seconds(4)).isEmpty)
        let actions = machine.timerFired(.attempt, now: t0 + .seconds(5))
        #expect(actions.first == .abortTransport(.timeout("connecting to http://127.0.0.1:3000")))
        guard case .reconnecting(2, _, .timeout)? = actions.published.last else {
            Issue.record("\(actions)")
            return
        }
    }

    @Test func acksResolveTimeOutAndIgnoreLateAnswers() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        let (first, sent) = try machine.emitWithAck("echo", ["a"], attachments: [], timeout: .seconds(2), policy: .buffer, now: t0)
        #expect(FakeServer.clientTexts(sent.written) == [#"420["echo","a"]"#])
        #expect(sent.contains(.schedule(.acks, at: t0 + .seconds(2))))
        let answered = machine.received(FakeServer.text(#"430["A"]"#), now: t0 + .seconds(1))
        // Answered: the one timer of all acks is left as it is.
        #expect(answered == [.resolveAck(id: first, payload: SocketIOPayload(args: ["A"]))])

        // A later limit than the timer's: no timer is set for it.
        let (second, emitted) = try machine.emitWithAck("slow", [], attachments: [], timeout: .seconds(2), policy: .buffer, now: t0 + .seconds(1))
        #expect(!emitted.contains { if case .schedule = $0 { true } else { false } })
        // Firing for the answered one, it fails nothing and is set for the second's limit.
        #expect(machine.timerFired(.acks, now: t0 + .seconds(2)) == [.schedule(.acks, at: t0 + .seconds(3))])
        let expired = machine.timerFired(.acks, now: t0 + .seconds(3))
        #expect(expired == [.failAck(id: second, error: .timeout("no ack for slow within 2000 ms"))])
        #expect(machine.pendingAckCount == 0)
        let late = machine.received(FakeServer.text(#"431[]"#), now: t0 + .seconds(4))
        #expect(late == [.log(.debug, "ignored an ack for unknown id 1")])
    }

    /// One timer for all awaited acks: set earlier for an earlier limit, and checked at most every
    /// `ackCheckInterval`, so limits a millisecond apart fail together, that little late at most.
    @Test func theAckLimitsAreCheckedByOneTimerAtMostEveryCheckInterval() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        let (slow, first) = try machine.emitWithAck("slow", [], attachments: [], timeout: .seconds(5), policy: .buffer, now: t0)
        #expect(first.contains(.schedule(.acks, at: t0 + .seconds(5))))
        // An earlier limit sets the timer earlier.
        var quick: [Int] = []
        for step in 0..<3 {
            let now = t0 + .milliseconds(step)
            let (id, actions) = try machine.emitWithAck("quick", [], attachments: [], timeout: .seconds(1), policy: .buffer, now: now)
            #expect(actions.contains(.schedule(.acks, at: now + .seconds(1))) == (step == 0), "step \(step)")
            quick.append(id)
        }
        // At the first limit: it fails; the next check is an interval on, not at the next limit.
        let firstCheck = machine.timerFired(.acks, now: t0 + .seconds(1))
        #expect(firstCheck == [.failAck(id: quick[0], error: .timeout("no ack for quick within 1000 ms")),
                               .schedule(.acks, at: t0 + .seconds(1) + SocketIOClientMachine.ackCheckInterval)])
        // There, both limits a millisecond apart have passed and fail together; then the slow one's.
        let secondCheck = machine.timerFired(.acks, now: t0 + .seconds(1) + SocketIOClientMachine.ackCheckInterval)
        #expect(secondCheck.failedAcks == [quick[1], quick[2]])
        #expect(secondCheck.last == .schedule(.acks, at: t0 + .seconds(5)))
        #expect(machine.timerFired(.acks, now: t0 + .seconds(5)).failedAcks == [slow])
        #expect(machine.pendingAckCount == 0)
    }

    @Test func aServerThatNeverAcknowledgesHoldsNoMoreThanTheLimitOfAwaitedAcks() throws {
        var machine = SocketIOClientMachine(configuration: configuration(awaitedAckLimit: 3), seed: 1)
        _ = try connect(&machine, at: t0)
        var ids: [Int] = []
        for second in 0..<3 {
            let (id, actions) = try machine.emitWithAck("a", [.number(Double(second))], attachments: [], timeout: .seconds(120), policy: .buffer,
                                                        now: t0 + .seconds(second))
            #expect(!actions.contains { if case .failAck = $0 { true } else { false } })
            ids.append(id)
        }
        // The fourth: the oldest awaited (not the newest id) is no longer awaited.
        let (fourth, actions) = try machine.emitWithAck("a", [3], attachments: [], timeout: .seconds(120), policy: .buffer, now: t0 + .seconds(3))
        #expect(FakeServer.clientTexts(actions.written) == [#"42\#(fourth)["a",3]"#])
        #expect(actions.contains(.failAck(id: ids[0], error: .ackAbandoned(limit: 3))))
        #expect(machine.pendingAckCount == 3)
        // A late answer to the abandoned one is ignored; the others still resolve.
        #expect(machine.received(FakeServer.text("43\(ids[0])[]"), now: t0 + .seconds(4)) == [.log(.debug, "ignored an ack for unknown id \(ids[0])")])
        #expect(machine.received(FakeServer.text("43\(ids[1])[]"), now: t0 + .seconds(4)).contains(.resolveAck(id: ids[1], payload: SocketIOPayload(args: []))))
        #expect(machine.pendingAckCount == 2)
    }

    @Test func aLostConnectionFailsItsAcksButKeepsBufferedOnes() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        let (sent, _) = try machine.emitWithAck("a", [], attachments: [], timeout: .seconds(10), policy: .buffer, now: t0)
        let lost = machine.transportEnded(.connectionLost("reset"), now: t0 + .seconds(1))
        #expect(lost.contains(.failAck(id: sent, error: .connectionLost("the connection ended before the ack: connection lost: reset"))))
        #expect(lost.contains(.cancel(.connection)))
        let (buffered, actions) = try machine.emitWithAck("b", [], attachments: [], timeout: .seconds(10), policy: .buffer, now: t0 + .seconds(1))
        #expect(actions.written.isEmpty)
        #expect(machine.pendingAckCount == 1)
        _ = machine.timerFired(.retry, now: t0 + .seconds(60))
        let reconnected = try connect(&machine, at: t0 + .seconds(60))
        #expect(FakeServer.clientTexts(reconnected.written) == [#"42\#(buffered)["b"]"#])
    }

    @Test func theOfflineBufferDropsTheOldestAndTheFailPolicyThrows() throws {
        var machine = SocketIOClientMachine(configuration: configuration(emitBufferLimit: 2), seed: 1)
        let (oldest, _) = try machine.emitWithAck("a", [], attachments: [], timeout: .seconds(10), policy: .buffer, now: t0)
        _ = try machine.emit("b", [], attachments: [], policy: .buffer, now: t0)
        let overflow = try machine.emit("c", [], attachments: [], policy: .buffer, now: t0)
        #expect(overflow.contains(.failAck(id: oldest, error: .emitDropped)))
        #expect(overflow.contains(.log(.warning, "offline buffer full: dropped an emit (1 so far)")))
        #expect(machine.droppedEmitCount == 1)
        #expect(throws: SocketIOError.notConnected) { try machine.emit("d", [], attachments: [], policy: .fail, now: t0) }
        let connected = try connect(&machine, at: t0)
        #expect(FakeServer.clientTexts(connected.written) == [#"42["b"]"#, #"42["c"]"#])
    }

    /// The heartbeat proves what reached the server: a v4 server sends its next ping only once
    /// it took the client's pong, so that ping proves everything written before the pong.
    @Test func aServersPingProvesThePreviousPongAndWhatWentBeforeIt() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        _ = try machine.emit("e1", [], attachments: [], policy: .fail, now: t0)
        let emitted = try #require(machine.lastEmitMark)
        let firstPing = machine.received(FakeServer.text("2"), now: t0)
        #expect(FakeServer.clientTexts(firstPing.written) == ["3"])
        #expect(firstPing.carried.isEmpty, "no pong before the first ping proves anything")
        let secondPing = machine.received(FakeServer.text("2"), now: t0)
        let proof = try #require(secondPing.carried.first)
        #expect(proof.covers(emitted))
        _ = try machine.emit("e2", [], attachments: [], policy: .fail, now: t0)
        let later = try #require(machine.lastEmitMark)
        #expect(!proof.covers(later), "an emit after the pong is not proven by it")
        // A buffered emit has no mark; a new connection's marks are not covered by an old proof.
        _ = machine.transportEnded(nil, now: t0)
        _ = try machine.emit("e3", [], attachments: [], policy: .buffer, now: t0)
        #expect(machine.lastEmitMark == nil)
    }

    @Test func aRefusalStopsUntilReconnectNow() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = machine.connect(now: t0)
        let epoch = try #require(machine.openingEpoch)
        let request = machine.transportOpened(epoch: epoch, credentials: SocketIOCredentials(), now: t0).written
        _ = machine.received(FakeServer.accept(request) + FakeServer.text(Self.open), now: t0)
        let refused = machine.received(FakeServer.text(#"44{"message":"nope"}"#), now: t0)
        #expect(refused.published == [.refused(.connectionRefused(message: "nope", data: nil))])
        #expect(refused.contains(.closeTransport))
        #expect(!machine.isRunning)
        #expect(machine.reconnectNow(now: t0).published == [.connecting(attempt: 1)])
    }

    @Test func theServersDisconnectStops() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        let kicked = machine.received(FakeServer.text("41"), now: t0)
        #expect(kicked.published == [.disconnected(.disconnectedByServer)])
        #expect(!machine.isRunning)
        #expect(throws: SocketIOError.notConnected) { try machine.ack(SocketIOAckToken(id: 1, epoch: 1), [], attachments: []) }
    }

    /// With `reconnectAfterServerDisconnect`, a DISCONNECT from the server is not the end: the
    /// client connects again, the first attempt after the floor plus up to as much again (the
    /// floor no longer than the backoff's cap).
    @Test(arguments: [(30_000, 5_000), (1_000, 1_000)])
    func afterTheServersDisconnectItConnectsAgainWhenAsked(capMs: Int, floorMs: Int) throws {
        var settings = configuration(reconnect: ReconnectPolicy(baseMs: 100, capMs: capMs, factor: 2, stableAfterMs: 5000))
        settings.reconnectAfterServerDisconnect = .seconds(5)
        for seed in UInt64(1)...20 {
            var machine = SocketIOClientMachine(configuration: settings, seed: seed)
            _ = try connect(&machine, at: t0)
            let kicked = machine.received(FakeServer.text("41"), now: t0)
            guard case .reconnecting(let attempt, let retryIn, let error)? = kicked.published.last else {
                Issue.record("published \(kicked.published)")
                return
            }
            #expect(attempt == 1 && error == .disconnectedByServer)
            #expect(retryIn >= .milliseconds(floorMs) && retryIn <= .milliseconds(2 * floorMs), "\(retryIn)")
            #expect(machine.isRunning)
        }
    }

    @Test func disconnectLeavesThenStopsAndReconnectNowStartsOver() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        let (id, _) = try machine.emitWithAck("a", [], attachments: [], timeout: .seconds(10), policy: .buffer, now: t0)
        let leaving = machine.disconnect(now: t0)
        #expect(FakeServer.clientTexts(leaving.written) == ["41", "1"])
        #expect(machine.isClosing)
        let closed = machine.received(FakeServer.close(1000), now: t0)
        #expect(closed.contains(.closeTransport))
        #expect(closed.contains(.failAck(id: id, error: .disconnectedByClient)))
        #expect(closed.published == [.disconnected(.disconnectedByClient)])
        #expect(!machine.isRunning && !machine.isClosing)

        _ = try connect(&machine, at: t0 + .seconds(1), sid: "s2")
        _ = machine.reconnectNow(now: t0 + .seconds(2))
        let restarted = machine.timerFired(.connection, now: t0 + .seconds(4))
        #expect(restarted.first == .abortTransport(.disconnectedByClient), "the close handshake's limit")
        #expect(restarted.published == [.connecting(attempt: 1)])
        #expect(machine.openingEpoch != nil)
    }

    @Test func connectDuringDisconnectStartsOnceStopped() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        _ = machine.disconnect(now: t0)
        #expect(machine.connect(now: t0).isEmpty, "not while the close handshake runs")
        let closed = machine.received(FakeServer.close(1000), now: t0)
        #expect(closed.published == [.disconnected(.disconnectedByClient), .connecting(attempt: 1)])
        #expect(machine.openingEpoch != nil)
    }

    @Test func aDeadServerIsDetectedByTheHeartbeat() throws {
        var machine = SocketIOClientMachine(configuration: configuration(), seed: 1)
        _ = try connect(&machine, at: t0)
        #expect(machine.timerFired(.connection, now: t0 + .milliseconds(1499)) == [.schedule(.connection, at: t0 + .milliseconds(1500))])
        let dead = machine.timerFired(.connection, now: t0 + .milliseconds(1500))
        #expect(dead.first == .abortTransport(.heartbeatTimeout))
        guard case .reconnecting(1, _, .heartbeatTimeout)? = dead.published.last else {
            Issue.record("\(dead)")
            return
        }
    }

    @Test func anInvalidURLStopsAtOnce() {
        var machine = SocketIOClientMachine(configuration: SocketIOConfiguration(url: "ftp://example.invalid"), seed: 1)
        #expect(machine.connect(now: t0).published == [.connecting(attempt: 1), .disconnected(.invalidURL("ftp://example.invalid"))])
        #expect(!machine.isRunning)
    }
}
