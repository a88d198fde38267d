import JSONValue
import Synchronization

/// Measures each live overlay's life and reports it with `emit-ack` (BACKEND.md "emit-ack
/// tracking"): one session per `_trackingId`, each stage at most once, a render timeout, and
/// at-least-once delivery of acks that are stored before they are sent.
///
/// Callers never wait for the network: a stage is recorded and its ack queued at once, and
/// one delivery lane per session sends the session's acks in order. The overlay pipeline does
/// not even wait for that: it records events on `feed`, handled here in order by `run()`, which
/// also owns the delivery lanes, the store writer and the retry timer. Everything runs on the
/// bookkeeping thread, shared with the store (`BackgroundExecutor`).
actor TrackingService {
    nonisolated var unownedExecutor: UnownedSerialExecutor { BackgroundExecutor.bookkeeping.asUnownedSerialExecutor() }

    /// Where the overlay pipeline records what happens to overlays.
    nonisolated let feed: TrackingFeed
    /// What `feed` delivers, handled by `run()`.
    private nonisolated let events: AsyncStream<TrackingFeed.Item>
    /// The lanes, the store writer and the retry timer, run as child tasks of `run()`.
    private nonisolated let work = ChildTasks()

    private let store: Store
    private let bus: EventBus
    private let log: Logger
    private let deviceId: String
    private var context: ClientContextBase
    private let renderTimeout: Duration
    /// How long an emit may stay unacknowledged on a live connection before it counts as delivered.
    private let ackTimeout: Duration
    /// Milliseconds since the epoch.
    private let clock: @Sendable () -> Int64

    private var sessions: [String: TrackingSession] = [:]
    /// When each shown overlay's render times out, by tracking id.
    private var renderDeadlines = DeadlineSchedule<String>()
    /// Recently finished sessions, so that a repeated `received` does not open them again.
    private var finishedIds: Set<String> = []
    private var finishedOrder: [String] = []
    private static let finishedMemory = 1024

    private var outbox = AckOutbox()
    private var transport: (any AckTransport)?
    /// Store writes not yet taken by the writer task, in order; no caller waits for SQLite.
    private var queuedWrites: [StoreWrite] = []
    private var writerRunning = false
    /// Writes the store refused (a full or read-only disk), oldest first: retried before the next
    /// write, every `storeRetryInterval` and at a graceful stop, so no ack is lost once space returns.
    private var failedWrites = RefusedWrites()
    private var retryTimerArmed = false
    private static let storeRetryInterval: Duration = .seconds(5)
    /// Callers of `drain` waiting for the outbox to empty, by id.
    private var drainWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextDrainWaiter = 0
    /// Bumped by each `setTransport` and by a drop; lanes of an older connection stop.
    private var connection = 0
    private var deliveredCount = 0
    /// Acks dropped because the backlog was full, in all and since an ack last went out.
    private var droppedAcks = 0
    private var droppedSinceDelivery = 0
    private var lastError: String?

    init(store: Store, bus: EventBus, log: Logger, deviceId: String, context: ClientContextBase,
         renderTimeout: Duration = .seconds(5), ackTimeout: Duration = .seconds(10),
         clock: @escaping @Sendable () -> Int64 = Timestamp.nowMs) {
        self.store = store
        self.bus = bus
        self.log = log
        self.deviceId = deviceId
        self.context = context
        self.renderTimeout = renderTimeout
        self.ackTimeout = ackTimeout
        self.clock = clock
        let (events, continuation) = AsyncStream.makeStream(of: TrackingFeed.Item.self)
        self.events = events
        feed = TrackingFeed(continuation: continuation)
    }

    /// Runs the service until cancelled: handles what the feed delivers, in order, and the
    /// background work (delivery lanes, store writes, the retry timer). Stop it after
    /// `flushStore`, so that the events recorded and the writes queued are done.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.handleFeed() }
            group.addTask { await self.work.run() }
        }
    }

    /// Handles what the feed delivers, in order, until the service stops.
    private func handleFeed() async {
        for await item in events {
            switch item {
            case .event(let event):
                await handle(event)
                feed.backlog.count.subtract(1, ordering: .releasing)
            case .settled(let continuation): continuation.resume()
            }
        }
    }

    private func handle(_ event: TrackingEvent) async {
        switch event {
        case .received(let trackingId, let timelineId, let overlayType, let emitTimestamp, let durationSec, let receivedAt):
            await received(trackingId: trackingId, timelineId: timelineId, overlayType: overlayType,
                           emitTimestamp: emitTimestamp, durationSec: durationSec, receivedAt: receivedAt)
        case .keptOffScreen(let trackingId, let reason): await keptOffScreen(trackingId: trackingId, reason: reason)
        case .shown(let trackingId): shown(trackingId: trackingId)
        case .attached(let trackingId, let at): await attached(trackingId: trackingId, at: at)
        case .loaded(let trackingId, let at): await loaded(trackingId: trackingId, at: at)
        case .failed(let trackingId, let reason, let at): await failed(trackingId: trackingId, reason: reason, at: at)
        case .cancelled(let trackingId, let reason): await cancelled(trackingId: trackingId, reason: reason)
        case .answerAttempted(let trackingId, let at): await answerAttempted(trackingId: trackingId, at: at)
        case .answerSucceeded(let trackingId, let at): await answerSucceeded(trackingId: trackingId, at: at)
        case .answerFailed(let trackingId, let reason, let step, let at):
            await answerFailed(trackingId: trackingId, reason: reason, step: step, at: at)
        }
    }

    // MARK: Start and connection

    /// At daemon start: stored acks are queued for delivery, and sessions left open by the
    /// previous run (kill -9 included) are closed, with `rendered` `cancelled`
    /// (`daemon_restart`) when it was not sent.
    func recoverAfterRestart() async {
        let storedAcks: [PendingAck]
        let storedSessions: [(trackingId: String, state: JSONValue)]
        do {
            storedAcks = try await store.pendingAcks()
            storedSessions = try await store.trackingSessions()
        } catch {
            note("Cannot read the stored tracking state: \(error)")
            await publishStatus()
            return
        }
        forgetDropped(outbox.prependStored(storedAcks))
        var closed = 0
        for (trackingId, state) in storedSessions where sessions[trackingId] == nil {
            guard let session = TrackingSession(trackingId: trackingId, stored: state), !session.renderedSent else {
                await persist(trackingId)
                continue
            }
            let outcome = RenderOutcome(status: .cancelled, at: clock(), cancelReason: "daemon_restart")
            await emit(.rendered, of: session, finishing: true) { $0.renderedFields(outcome, ackSent: $1) }
            closed += 1
        }
        if !storedAcks.isEmpty || !storedSessions.isEmpty {
            log.info("Tracking recovered \(storedAcks.count) stored acks and \(storedSessions.count) open sessions "
                     + "(\(closed) closed as daemon_restart)")
        }
        startLanes()
        await publishStatus()
    }

    /// `nil`: offline, acks wait in the store. A transport: connected, every waiting ack is sent
    /// (oldest first, in order within each session).
    func setTransport(_ transport: (any AckTransport)?) async {
        self.transport = transport
        connection &+= 1
        outbox.resetLanes()
        log.debug(transport == nil ? "Tracking offline; acks are kept" : "Tracking connected; \(outbox.count) acks to send")
        startLanes()
        await publishStatus()
    }

    /// Waits until every pending ack (events recorded so far included) was delivered, at most
    /// `limit`; returns at once when offline.
    /// Used before the connection is closed on purpose (leaving a room, stopping the daemon).
    func drain(within limit: Duration) async {
        await feed.settled()
        guard transport != nil, outbox.count > 0 else { return }
        let id = nextDrainWaiter
        nextDrainWaiter += 1
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                await self.endDrain(id)
            }
            await withCheckedContinuation { drainWaiters[id] = $0 }
            group.cancelAll()
        }
    }

    private func endDrain(_ id: Int) { drainWaiters.removeValue(forKey: id)?.resume() }

    private func wakeDrainersIfEmpty() {
        guard outbox.count == 0 else { return }
        for waiter in drainWaiters.values { waiter.resume() }
        drainWaiters.removeAll()
    }

    func updateViewport(width: Int, height: Int) {
        context.viewportWidth = width
        context.viewportHeight = height
    }

    func updateDeviceClass(_ deviceClass: String) {
        context.deviceClass = deviceClass
    }

    // MARK: Lifecycle of one overlay

    /// The overlay arrived: opens the session and sends `received`.
    func received(trackingId: String, timelineId: String, overlayType: String, emitTimestamp: Int64?,
                  durationSec: Int = 0, receivedAt: Int64) async {
        guard sessions[trackingId] == nil, !finishedIds.contains(trackingId) else {
            log.debug("Tracking session already known; overlay not tracked again", fields(trackingId))
            return
        }
        var session = TrackingSession(trackingId: trackingId, timelineId: timelineId, overlayType: overlayType,
                                      emitTimestamp: emitTimestamp, receivedAt: receivedAt)
        session.durationSec = durationSec > 0 ? durationSec : nil
        await emit(.received, of: session, finishing: false) { $0.receivedFields(ackSent: $1) }
    }

    /// The overlay is not shown (not_targeted, already_interacted, already_on_screen,
    /// invalid_overlay_state): `rendered` `cancelled` right after `received`.
    func keptOffScreen(trackingId: String, reason: String) async {
        await settleRender(trackingId, RenderOutcome(status: .cancelled, at: clock(), cancelReason: reason))
    }

    /// The overlay was handed to the players (or the predict/lucky dialog opened): the render
    /// timer starts.
    func shown(trackingId: String) {
        guard let session = sessions[trackingId], !session.renderedSent, !renderDeadlines.contains(trackingId) else { return }
        if let target = renderDeadlines.set(trackingId, at: .now + renderTimeout) { armRenderTimer(at: target) }
    }

    private func armRenderTimer(at target: ContinuousClock.Instant) {
        // Unstructured: the one render timer must be cancelled when an earlier deadline
        // replaces it (`DeadlineSchedule.armed`), which a child task of `run()` cannot be.
        renderDeadlines.armed(Task {
            try? await Task.sleep(until: target, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self.renderTimersFired()
        }, at: target)
    }

    /// A player attached the overlay: the timeline's `attached` and `renderStart`.
    func attached(trackingId: String, at: Int64) async {
        guard var session = sessions[trackingId], !session.renderedSent, session.attachedAt == nil else { return }
        session.attachedAt = at
        sessions[trackingId] = session
        await persist(trackingId)
    }

    /// The overlay loaded: `rendered` `success`; the session stays open for the answer.
    func loaded(trackingId: String, at: Int64) async {
        await settleRender(trackingId, RenderOutcome(status: .success, at: at), loadCompleteAt: at)
    }

    /// The overlay failed to load: `rendered` `failed` (`load_error`, step `render`).
    func failed(trackingId: String, reason: String?, at: Int64) async {
        await settleRender(trackingId, RenderOutcome(status: .failed, at: at, failureReason: "load_error",
                                                     failureStep: "render", detail: reason))
    }

    /// The overlay went away (replaced, recalled, hidden, dismissed, expired, player gone).
    /// Before `rendered`: `rendered` `cancelled`. After it: the session ends without a stage,
    /// unless an answer was sent and its result is still to come.
    func cancelled(trackingId: String, reason: String) async {
        guard let session = sessions[trackingId] else { return }
        guard session.renderedSent else {
            await settleRender(trackingId, RenderOutcome(status: .cancelled, at: clock(), cancelReason: reason))
            return
        }
        guard !session.awaitsAnswerResult else { return }
        log.debug("Tracking session ended (\(reason))", fields(trackingId))
        finish(trackingId)
        await persist(trackingId)
        await publishStatus()
    }

    /// The answer is being submitted: stage `answer`.
    func answerAttempted(trackingId: String, at: Int64) async {
        await answer(trackingId, AnswerOutcome(stage: .answer, at: at), finishing: false)
    }

    /// The backend took the answer: stage `answer-succeeded`; the session ends.
    func answerSucceeded(trackingId: String, at: Int64) async {
        await answer(trackingId, AnswerOutcome(stage: .answerSucceeded, at: at), finishing: true)
    }

    /// The answer failed (`api_<code>`, `api_false`, `network_error`, `unknown_response`):
    /// stage `answer-failed`; the session ends.
    func answerFailed(trackingId: String, reason: String, step: String?, at: Int64) async {
        let outcome = AnswerOutcome(stage: .answerFailed, at: at, failureReason: reason, failureStep: step)
        await answer(trackingId, outcome, finishing: true)
    }

    // MARK: Stages

    private func renderTimersFired() async {
        let (due, next) = renderDeadlines.takeDue(now: .now)
        if let next { armRenderTimer(at: next) }
        for trackingId in due {
            await settleRender(trackingId, RenderOutcome(status: .timeout, at: clock(), failureReason: "timeout"))
        }
    }

    /// Sends `rendered` once; any status but success ends the session.
    private func settleRender(_ trackingId: String, _ outcome: RenderOutcome, loadCompleteAt: Int64? = nil) async {
        guard var session = sessions[trackingId], !session.renderedSent else { return }
        if let loadCompleteAt { session.loadCompleteAt = loadCompleteAt }
        renderDeadlines.remove(trackingId)
        var details = fields(trackingId)
        details["INTERACTIVE_RENDER_STATUS"] = outcome.status.rawValue
        if let reason = outcome.cancelReason ?? outcome.failureReason { details["INTERACTIVE_REASON"] = reason }
        log.info("Overlay render \(outcome.status.rawValue)", details)
        await emit(.rendered, of: session, finishing: outcome.status != .success) { $0.renderedFields(outcome, ackSent: $1) }
    }

    private func answer(_ trackingId: String, _ outcome: AnswerOutcome, finishing: Bool) async {
        guard let session = sessions[trackingId] else { return }
        await emit(outcome.stage, of: session, finishing: finishing) { $0.answerFields(outcome, ackSent: $1) }
    }

    /// Sends `stage` of `session` unless it was sent. The stage is recorded and its ack queued
    /// before the first suspension, so a racing call sees it; then the ack and the session's
    /// state are stored together, and only then may the ack be sent.
    private func emit(_ stage: TrackingStage, of session: TrackingSession, finishing: Bool,
                      fields stageFields: (TrackingSession, Int64) -> [String: JSONValue]) async {
        guard !session.sent.contains(stage) else { return }
        var session = session
        session.sent.insert(stage)
        let ackSent = clock()
        let payload = PendingAck.payload(trackingId: session.trackingId, stage: stage, deviceId: deviceId,
                                         clientContext: context.clientContext(stageFields(session, ackSent)))
        let ack = PendingAck(trackingId: session.trackingId, stage: stage, payload: payload, created: ackSent)
        if finishing {
            finish(session.trackingId)
        } else {
            sessions[session.trackingId] = session
        }
        forgetDropped(outbox.append(ack))
        log.debug("Tracking ack queued", ackFields(session.trackingId, stage))
        // `.none`, not `nil`: JSONValue is ExpressibleByNilLiteral, so a bare `nil` would become `.null`.
        let state: JSONValue? = finishing ? .none : .some(session.stored)
        enqueue(.change(.ack(ack, sessionState: state, at: ackSent)))
        await publishStatus()
    }

    // MARK: Store writes

    /// A write of the tracking tables, or `flushed`: a barrier that resumes once earlier writes ran.
    private enum StoreWrite: Sendable {
        case change(TrackingWrite)
        case flushed(CheckedContinuation<Void, Never>)
    }

    /// Queues a write, after the writes that failed before it; a writer task runs while writes
    /// are queued.
    private func enqueue(_ write: StoreWrite) {
        requeueFailedWrites()
        queuedWrites.append(write)
        startWriter()
    }

    private func startWriter() {
        guard !writerRunning else { return }
        writerRunning = true
        work.start { await self.writeQueued() }
    }

    /// Writes what is queued, everything queued at once in one transaction, until nothing is.
    private func writeQueued() async {
        while !queuedWrites.isEmpty {
            let batch = queuedWrites
            queuedWrites = []
            let failures = await store.apply(batch.compactMap { write -> TrackingWrite? in
                if case .change(let change) = write { return change } else { return nil }
            })
            var index = 0
            var acksStored = false
            var refused: [TrackingWrite] = []
            for write in batch {
                guard case .change(let change) = write else {
                    if case .flushed(let continuation) = write { continuation.resume() }
                    continue
                }
                let failure = failures[index]
                index += 1
                if failure != nil { refused.append(change) }
                switch change {
                case .ack(let ack, _, _):
                    if let failure {
                        note("Cannot store a tracking ack (it is sent from memory and stored when the store takes it again): \(failure)",
                             ack.trackingId)
                    }
                    outbox.markStored(ack)
                    acksStored = true
                case .session(let trackingId, _, _):
                    if let failure { note("Cannot store a tracking session: \(failure)", trackingId) }
                case .deleteAck(let ack):
                    if let failure { note("Cannot delete a delivered tracking ack: \(failure)", ack.trackingId) }
                }
            }
            failedWrites.append(refused)
            if acksStored || !refused.isEmpty {
                startLanes()
                await publishStatus()
            }
        }
        writerRunning = false
        armRetryTimer()
    }

    /// Puts the writes that failed back at the head of the queue (they are older than any queued).
    private func requeueFailedWrites() {
        guard !failedWrites.isEmpty else { return }
        let retried = failedWrites.takeForRetry { outbox.contains($0) }
        queuedWrites.insert(contentsOf: retried.map(StoreWrite.change), at: 0)
    }

    /// While writes wait for a retry, one timer retries them.
    private func armRetryTimer() {
        guard !failedWrites.isEmpty, !retryTimerArmed else { return }
        retryTimerArmed = true
        // One sleeping task at a time, and only while the store refuses writes.
        work.start {
            guard (try? await Task.sleep(for: TrackingService.storeRetryInterval)) != nil else { return }
            await self.retryFailedWrites()
        }
    }

    private func retryFailedWrites() {
        retryTimerArmed = false
        requeueFailedWrites()
        if !queuedWrites.isEmpty { startWriter() }
    }

    /// Waits until every event recorded on the feed so far was handled and every store write
    /// it made is done (graceful stop, tests).
    /// Writes that failed are tried once more first.
    func flushStore() async {
        await feed.settled()
        await withCheckedContinuation { enqueue(.flushed($0)) }
    }

    private func finish(_ trackingId: String) {
        sessions[trackingId] = nil
        renderDeadlines.remove(trackingId)
        guard finishedIds.insert(trackingId).inserted else { return }
        finishedOrder.append(trackingId)
        if finishedOrder.count > Self.finishedMemory { finishedIds.remove(finishedOrder.removeFirst()) }
    }

    /// Writes the session's state, or deletes its row when it is no longer open.
    private func persist(_ trackingId: String) async {
        enqueue(.change(.session(trackingId, state: sessions[trackingId]?.stored, at: clock())))
    }

    // MARK: Delivery

    /// Starts a lane for each session with a sendable ack and none running.
    private func startLanes() {
        guard let transport else { return }
        let connection = self.connection
        for trackingId in outbox.claimLanes(upTo: AckOutbox.maxLanes) {
            work.start { await self.runLane(trackingId, transport: transport, connection: connection) }
        }
    }

    /// Sends one session's acks in order until none is left or the transport is replaced, then
    /// hands its slot to another session. A drop makes the service offline: the acks stay
    /// stored until the next `setTransport`.
    private func runLane(_ trackingId: String, transport: any AckTransport, connection: Int) async {
        while connection == self.connection, let ack = outbox.next(for: trackingId) {
            switch await transport.emitAck(ack.payload(sentAt: clock()), timeout: ackTimeout) {
            case .acked:
                await markDelivered(ack, confirmed: true)
            case .notAcked:
                await markDelivered(ack, confirmed: false)
            case .notConnected:
                guard connection == self.connection else { return }
                log.debug("Tracking ack not sent: no connection; acks kept for the next one", fields(trackingId))
                self.transport = nil
                self.connection &+= 1
                outbox.resetLanes()
                await publishStatus()
                return
            }
        }
        guard connection == self.connection else { return }
        outbox.endLane(trackingId)
        startLanes()
    }

    /// Acks the outbox dropped because it was full: gone from the store too, counted, and
    /// warned about once per burst (the first drop after acks went out again).
    private func forgetDropped(_ dropped: [PendingAck]) {
        guard !dropped.isEmpty else { return }
        if droppedSinceDelivery == 0 {
            note("Emit-ack backlog full (\(AckOutbox.capacity) acks): dropping the oldest")
        }
        droppedAcks += dropped.count
        droppedSinceDelivery += dropped.count
        for ack in dropped {
            log.debug("Tracking ack dropped: backlog full", ackFields(ack.trackingId, ack.stage))
            enqueue(.change(.deleteAck(ack)))
        }
    }

    /// The ack left for good: acknowledged, or unacknowledged for `ackTimeout` on a live connection.
    private func markDelivered(_ ack: PendingAck, confirmed: Bool) async {
        guard outbox.remove(ack) else { return }
        deliveredCount += 1
        droppedSinceDelivery = 0
        wakeDrainersIfEmpty()
        log.debug(confirmed ? "Tracking ack acknowledged" : "Tracking ack not acknowledged in time; counted as delivered",
                  ackFields(ack.trackingId, ack.stage))
        enqueue(.change(.deleteAck(ack)))
        await publishStatus()
    }

    // MARK: Status and logging

    private func publishStatus() async {
        await bus.setStatus("tracking", [
            "openSessions": .number(Double(sessions.count)),
            "pendingAcks": .number(Double(outbox.count)),
            "delivered": .number(Double(deliveredCount)),
            "droppedAcks": .number(Double(droppedAcks)),
            "connected": .bool(transport != nil),
            "unstoredWrites": .number(Double(failedWrites.count)),
            "lastError": JSONValue(lastError),
        ])
    }

    private func note(_ problem: String, _ trackingId: String? = nil) {
        lastError = problem
        log.warning(problem, trackingId.map(fields) ?? [:])
    }

    private func fields(_ trackingId: String) -> [String: String] { ["INTERACTIVE_TRACKING_ID": trackingId] }

    private func ackFields(_ trackingId: String, _ stage: TrackingStage) -> [String: String] {
        ["INTERACTIVE_TRACKING_ID": trackingId, "INTERACTIVE_TRACKING_STAGE": stage.rawValue]
    }
}

/// The overlay pipeline's way into TrackingService: recording an event only queues it.
struct TrackingFeed: OverlayTracker {
    enum Item: Sendable {
        case event(TrackingEvent)
        /// Resumed once every event queued before it was handled.
        case settled(CheckedContinuation<Void, Never>)
    }

    /// Events recorded and not handled yet.
    final class Backlog: Sendable {
        let count = Atomic<Int>(0)
    }

    let continuation: AsyncStream<Item>.Continuation
    let backlog = Backlog()

    func record(_ event: TrackingEvent) {
        backlog.count.add(1, ordering: .relaxed)
        continuation.yield(.event(event))
    }

    /// Waits while at most `settleLimit` events are behind, so a status read after an action
    /// reflects it; a longer backlog (a flood of overlays) is not waited for: the read answers
    /// at once with tracking figures that may trail by those events.
    func settled() async {
        let behind = backlog.count.load(ordering: .acquiring)
        guard behind > 0, behind <= Self.settleLimit else { return }
        await withCheckedContinuation { continuation.yield(.settled($0)) }
    }

    static let settleLimit = 256

    func keepUp() async {
        guard backlog.count.load(ordering: .acquiring) > Self.backlogLimit else { return }
        await withCheckedContinuation { continuation.yield(.settled($0)) }
    }

    /// The backlog past which the overlay pipeline waits for tracking (`keepUp`). Measured with
    /// Benchmarks/floods.py: without it, a flood of overlays left the feed's buffer holding ~9 MB.
    static let backlogLimit = 512
}
