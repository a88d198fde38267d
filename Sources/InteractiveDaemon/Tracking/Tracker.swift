import JSONValue
import Runtime
import SocketIO

/// Measures each live overlay's life and reports it with `emit-ack` (BACKEND.md "emit-ack
/// tracking"): a thin shell on the loop around `TrackingBook`, which decides the sessions, the
/// stages, when an ack is delivered and what the store must hold. This performs it: acks on the
/// connection (`AckTransport`) as they are decided, the render and store timers, the store's
/// writes (`TrackingStoreWriter`, off the loop), and the status board's `tracking` section.
///
/// The overlay pipeline records events here synchronously (`OverlayTracker`): the decision and
/// the emit take no hop; only the store's writes, when any are due, go to the bookkeeping thread.
@LoopActor
final class Tracker: OverlayTracker {
    private var book: TrackingBook
    private let bus: EventBus
    private let log: Logger
    /// Milliseconds since the epoch.
    private let clock: @Sendable () -> Int64
    private let timers: any TimerScheduler
    private let store: Store
    /// The store's transactions, run as child tasks of `run()`.
    private let work = ChildTasks()
    /// The store's writes on their way (`writer.idle()`: until every one submitted is done).
    let writer: TrackingStoreWriter
    private var transport: (any AckTransport)?
    private var renderTimer: TimerID?
    private var storeTimer: TimerID?
    /// Callers of `drain` waiting for every ack to be delivered, by id.
    private var drainWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextDrainWaiter = 0

    init(store: Store, bus: EventBus, log: Logger, deviceId: String, context: ClientContextBase,
         renderTimeout: Duration = .seconds(5), storeDelay: Duration = .milliseconds(50),
         clock: @escaping @Sendable () -> Int64 = Timestamp.nowMs, timers: any TimerScheduler = EventLoop.shared) {
        self.store = store
        self.bus = bus
        self.log = log
        self.clock = clock
        self.timers = timers
        book = TrackingBook(deviceId: deviceId, context: context, renderTimeout: renderTimeout, storeDelay: storeDelay)
        writer = TrackingStoreWriter(store: store, work: work)
        writer.finished = { [weak self] writes, failures in
            guard let self else { return }
            perform(book.stored(writes, failures: failures, now: timers.now))
        }
        // The board's `tracking` section, built when it is read: tracking changes with every overlay.
        bus.setStatus("tracking") { [weak self] in self.map { $0.book.status(unstoredWrites: $0.writer.unstored) } ?? .null }
    }

    /// Runs the store's transactions until cancelled. Stop it after `flushStore`.
    func run() async {
        await work.run()
    }

    // MARK: What the overlay pipeline reports

    func record(_ event: TrackingEvent) {
        let nowMs = clock()
        perform(book.handle(event, nowMs: nowMs, now: timers.now), nowMs: nowMs)
    }

    func updateViewport(width: Int, height: Int) {
        book.context.viewportWidth = width
        book.context.viewportHeight = height
    }

    func updateDeviceClass(_ deviceClass: String) {
        book.context.deviceClass = deviceClass
    }

    // MARK: The connection

    /// nil: offline, acks wait (and are stored after the delay). A transport: connected, every
    /// waiting ack is sent, oldest first.
    func setTransport(_ transport: (any AckTransport)?) {
        self.transport = transport
        if transport == nil { endDrains() }
        log.debug(transport == nil ? "Tracking offline; acks are kept" : "Tracking connected; \(book.outbox.count) acks to send")
        perform(book.connectionChanged(up: transport != nil))
    }

    /// The connection proved it carried everything written up to `mark`.
    func carried(upTo mark: SocketIOWriteMark) {
        perform(book.carried(upTo: mark, now: timers.now))
    }

    /// Waits until every pending ack was delivered, `limit` at most; returns at once when
    /// offline, and as soon as tracking goes offline meanwhile. Used before the connection is
    /// closed on purpose (leaving a room, stopping the daemon).
    func drain(within limit: Duration) async {
        guard transport != nil, book.outbox.count > 0 else { return }
        let id = nextDrainWaiter
        nextDrainWaiter += 1
        let timer = timers.schedule(at: timers.now + limit) { [weak self] in self?.endDrain(id) }
        await withCheckedContinuation { drainWaiters[id] = $0 }
        timers.cancel(timer)
    }

    private func endDrain(_ id: Int) { drainWaiters.removeValue(forKey: id)?.resume() }

    private func endDrains() {
        for waiter in drainWaiters.values { waiter.resume() }
        drainWaiters.removeAll()
    }

    // MARK: Start and stop

    /// At daemon start: stored acks wait first (sent once connected), and sessions left open by
    /// the previous run (kill -9 included) are closed, with `rendered` `cancelled`
    /// (`daemon_restart`) when it was not sent.
    func recoverAfterRestart() async {
        let storedAcks: [PendingAck]
        let storedSessions: [(trackingId: String, state: JSONValue)]
        do {
            storedAcks = try await store.pendingAcks()
            storedSessions = try await store.trackingSessions()
        } catch {
            perform([.log(book.note("Cannot read the stored tracking state: \(error)"))])
            return
        }
        let nowMs = clock()
        perform(book.recovered(acks: storedAcks, sessions: storedSessions, nowMs: nowMs, now: timers.now), nowMs: nowMs)
    }

    /// Stores what a restart needs now (the undelivered acks, the sessions still open) and waits
    /// until every write is done: the graceful stop, and tests.
    func flushStore() async {
        perform(book.storeDue(now: timers.now, nowMs: clock(), everything: true))
        await writer.idle()
    }

    // MARK: Effects

    /// `nowMs`: the moment the effects were decided at, when they were (an ack sent in the same
    /// turn goes out as it was written).
    private func perform(_ effects: [TrackingEffect], nowMs: Int64? = nil) {
        for effect in effects {
            switch effect {
            case .send(let ack):
                send(ack, at: nowMs ?? clock())
            case .store(let writes):
                writer.submit(writes)
            case .armRenderTimer(let target):
                if let renderTimer { timers.cancel(renderTimer) }
                let generation = book.renderTimerArmed(at: target)
                renderTimer = timers.schedule(at: target) { [weak self] in
                    guard let self else { return }
                    let nowMs = clock()
                    perform(book.renderTimerFired(generation, now: timers.now, nowMs: nowMs), nowMs: nowMs)
                }
            case .armStoreTimer(let target):
                if let storeTimer { timers.cancel(storeTimer) }
                storeTimer = timers.schedule(at: target) { [weak self] in
                    guard let self else { return }
                    storeTimer = nil
                    perform(book.storeDue(now: timers.now, nowMs: clock()))
                }
            case .log(let line):
                write(line)
            case .outboxEmpty:
                endDrains()
            }
        }
    }

    private func send(_ ack: PendingAck, at sentAt: Int64) {
        guard let transport else { return perform(book.sendOutcome(ack, sent: false, at: nil)) }
        let outcome = transport.emitAck(ack.payload(sentAt: sentAt)) { [weak self] in
            guard let self else { return }
            perform(book.acknowledged(ack, now: timers.now))
        }
        switch outcome {
        case .written(let mark): perform(book.sendOutcome(ack, sent: true, at: mark))
        case .notConnected:
            log.debug("Tracking ack not sent: no connection; acks kept for the next one", ["INTERACTIVE_TRACKING_ID": ack.trackingId])
            self.transport = nil
            endDrains()
            perform(book.sendOutcome(ack, sent: false, at: nil))
        }
    }

    // MARK: Logging

    private func write(_ line: TrackingLogLine) {
        switch line {
        case .alreadyKnown(let trackingId):
            log.debug("Tracking session already known; overlay not tracked again", fields(trackingId))
        case .render(let trackingId, let status, let reason):
            // One line per decision: an overlay replaced or taken off was logged by the screen
            // (its cancel is a debug detail); a render that failed or timed out is news.
            log.log(status == .cancelled || status == .success ? .debug : .info, "Overlay render \(status.rawValue)", {
                var details = fields(trackingId)
                details["INTERACTIVE_RENDER_STATUS"] = status.rawValue
                if let reason { details["INTERACTIVE_REASON"] = reason }
                return details
            }())
        case .sessionEnded(let trackingId, let reason):
            log.debug("Tracking session ended (\(reason))", fields(trackingId))
        case .ackDropped(let trackingId, let stage):
            log.debug("Tracking ack dropped: backlog full", fields(trackingId).merging(["INTERACTIVE_TRACKING_STAGE": stage.rawValue]))
        case .recovered(let acks, let sessions, let closed):
            log.info("Tracking recovered \(acks) stored acks and \(sessions) open sessions (\(closed) closed as daemon_restart)")
        case .problem(let problem, let trackingId):
            log.warning(problem, trackingId.map(fields) ?? [:])
        }
    }

    private func fields(_ trackingId: String) -> LogFields { ["INTERACTIVE_TRACKING_ID": trackingId] }
}
