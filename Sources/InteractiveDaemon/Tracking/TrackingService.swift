import JSONValue
import Runtime
import Synchronization

/// Measures each live overlay's life and reports it with `emit-ack` (BACKEND.md "emit-ack
/// tracking"): a thin shell around `TrackingBook` (sessions, stages, the render timeout, which
/// acks wait) that performs what it decides, with at-least-once delivery of acks that are
/// stored before they are sent.
///
/// Callers never wait for the network: a stage is recorded and its ack queued at once, and
/// one delivery lane per session sends the session's acks in order. The overlay pipeline does
/// not even wait for that: it records events on `feed`, handled here in order by `run()`, which
/// also owns the delivery lanes, the store writer and the timers. It runs on the bookkeeping
/// thread (nice +10), shared with the store, off the display path; the overlay pipeline reaches
/// it only by messages (the feed).
actor TrackingService {
    nonisolated var unownedExecutor: UnownedSerialExecutor { BookkeepingExecutor.shared.asUnownedSerialExecutor() }

    /// Where the overlay pipeline records what happens to overlays.
    nonisolated let feed: TrackingFeed
    /// What `feed` delivers, handled by `run()`.
    private nonisolated let events: Mailbox<TrackingFeed.Item>
    /// The lanes, the store writer and the timers, run as child tasks of `run()`.
    private nonisolated let work = ChildTasks(preferring: EventLoop.shared.taskExecutor)

    private let store: Store
    private let bus: EventBus
    private let log: Logger
    /// How long an emit may stay unacknowledged on a live connection before it counts as delivered.
    private let ackTimeout: Duration
    /// Milliseconds since the epoch.
    private let clock: @Sendable () -> Int64
    /// The monotonic time and the sleeps of the timers (render timeout, store retry, drain limit).
    private nonisolated let timers: any TimerClock

    private var book: TrackingBook
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

    init(store: Store, bus: EventBus, log: Logger, deviceId: String, context: ClientContextBase,
         renderTimeout: Duration = .seconds(5), ackTimeout: Duration = .seconds(10),
         clock: @escaping @Sendable () -> Int64 = Timestamp.nowMs, timers: any TimerClock = EventLoop.shared) {
        self.store = store
        self.bus = bus
        self.log = log
        self.ackTimeout = ackTimeout
        self.clock = clock
        self.timers = timers
        book = TrackingBook(deviceId: deviceId, context: context, renderTimeout: renderTimeout)
        events = Mailbox()
        feed = TrackingFeed(mailbox: events)
    }

    /// Runs the service until cancelled: handles what the feed delivers, in order, and the
    /// background work (delivery lanes, store writes, timers). Stop it after `flushStore`, so
    /// that the events recorded and the writes queued are done.
    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.handleFeed() }
            group.addTask { await self.work.run() }
        }
    }

    /// Handles what the feed delivers, in order, until the service stops.
    private func handleFeed() async {
        while let item = await events.next() {
            switch item {
            case .event(let event):
                await record(event)
                feed.backlog.count.subtract(1, ordering: .releasing)
            // Resumed once the store writes of the events before it are done too: a status read
            // that says an ack is pending may be followed by a kill -9, and the ack must survive it.
            case .settled(let waiter): enqueue(.flushed(waiter))
            }
        }
    }

    /// Takes one event of the overlay pipeline (the feed delivers them here; tests call it directly).
    func record(_ event: TrackingEvent) async {
        await perform(book.handle(event, nowMs: clock(), now: timers.now))
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
            await perform([.log(book.note("Cannot read the stored tracking state: \(error)")), .status])
            return
        }
        await perform(book.recovered(acks: storedAcks, sessions: storedSessions, nowMs: clock()))
        startLanes()
    }

    /// `nil`: offline, acks wait in the store. A transport: connected, every waiting ack is sent
    /// (oldest first, in order within each session).
    func setTransport(_ transport: (any AckTransport)?) async {
        self.transport = transport
        connection &+= 1
        book.outbox.resetLanes()
        if transport == nil { endDrains() }
        log.debug(transport == nil ? "Tracking offline; acks are kept" : "Tracking connected; \(book.outbox.count) acks to send")
        startLanes()
        await publishStatus()
    }

    /// Waits until every pending ack (events recorded so far included) was delivered, at most
    /// `limit`; returns at once when offline, and as soon as the service goes offline meanwhile.
    /// Used before the connection is closed on purpose (leaving a room, stopping the daemon).
    func drain(within limit: Duration) async {
        await feed.settled()
        guard transport != nil, book.outbox.count > 0 else { return }
        let id = nextDrainWaiter
        nextDrainWaiter += 1
        await withTaskGroup(of: Void.self) { group in
            // Ends the wait at the limit, or at once when the caller is cancelled (the sleep then
            // returns early); after a drain that finished it finds nothing to end.
            group.addTask {
                await self.timers.sleep(for: limit) {}
                await self.endDrain(id)
            }
            await withCheckedContinuation { drainWaiters[id] = $0 }
            group.cancelAll()
        }
    }

    private func endDrain(_ id: Int) { drainWaiters.removeValue(forKey: id)?.resume() }

    /// Ends every `drain`: the outbox is empty, or the service is offline and it cannot empty.
    private func endDrains() {
        for waiter in drainWaiters.values { waiter.resume() }
        drainWaiters.removeAll()
    }

    func updateViewport(width: Int, height: Int) {
        book.context.viewportWidth = width
        book.context.viewportHeight = height
    }

    func updateDeviceClass(_ deviceClass: String) {
        book.context.deviceClass = deviceClass
    }

    // MARK: Lifecycle of one overlay (each is a `TrackingEvent`; see `TrackingBook`)

    func received(trackingId: String, timelineId: String, overlayType: String, emitTimestamp: Int64?,
                  durationSec: Int = 0, receivedAt: Int64) async {
        await record(.received(trackingId: trackingId, timelineId: timelineId, overlayType: overlayType,
                               emitTimestamp: emitTimestamp, durationSec: durationSec, receivedAt: receivedAt))
    }

    func keptOffScreen(trackingId: String, reason: String) async { await record(.keptOffScreen(trackingId: trackingId, reason: reason)) }
    func shown(trackingId: String) async { await record(.shown(trackingId: trackingId)) }
    func attached(trackingId: String, at: Int64) async { await record(.attached(trackingId: trackingId, at: at)) }
    func loaded(trackingId: String, at: Int64) async { await record(.loaded(trackingId: trackingId, at: at)) }
    func failed(trackingId: String, reason: String?, at: Int64) async { await record(.failed(trackingId: trackingId, reason: reason, at: at)) }
    func cancelled(trackingId: String, reason: String) async { await record(.cancelled(trackingId: trackingId, reason: reason)) }
    func answerAttempted(trackingId: String, at: Int64) async { await record(.answerAttempted(trackingId: trackingId, at: at)) }
    func answerSucceeded(trackingId: String, at: Int64) async { await record(.answerSucceeded(trackingId: trackingId, at: at)) }

    func answerFailed(trackingId: String, reason: String, step: String?, at: Int64) async {
        await record(.answerFailed(trackingId: trackingId, reason: reason, step: step, at: at))
    }

    // MARK: Effects

    /// Performs what the book decided, in order. The store writes are only queued.
    private func perform(_ effects: [TrackingEffect]) async {
        for effect in effects {
            switch effect {
            case .store(let write):
                enqueue(.change(write))
            case .armRenderTimer(let target):
                let generation = book.renderTimerArmed(at: target)
                work.start {
                    await self.timers.sleep(until: target) { await self.renderTimerFired(generation) }
                }
            case .log(let line):
                write(line)
            case .status:
                await publishStatus()
            case .outboxEmpty:
                endDrains()
            }
        }
    }

    private func renderTimerFired(_ generation: Int) async {
        await perform(book.renderTimerFired(generation, now: timers.now, nowMs: clock()))
    }

    private func write(_ line: TrackingLogLine) {
        switch line {
        case .alreadyKnown(let trackingId):
            log.debug("Tracking session already known; overlay not tracked again", fields(trackingId))
        case .render(let trackingId, let status, let reason):
            var details = fields(trackingId)
            details["INTERACTIVE_RENDER_STATUS"] = status.rawValue
            if let reason { details["INTERACTIVE_REASON"] = reason }
            log.info("Overlay render \(status.rawValue)", details)
        case .ackQueued(let trackingId, let stage):
            log.debug("Tracking ack queued", ackFields(trackingId, stage))
        case .sessionEnded(let trackingId, let reason):
            log.debug("Tracking session ended (\(reason))", fields(trackingId))
        case .ackDropped(let trackingId, let stage):
            log.debug("Tracking ack dropped: backlog full", ackFields(trackingId, stage))
        case .delivered(let trackingId, let stage, let confirmed):
            log.debug(confirmed ? "Tracking ack acknowledged" : "Tracking ack not acknowledged in time; counted as delivered",
                      ackFields(trackingId, stage))
        case .recovered(let acks, let sessions, let closed):
            log.info("Tracking recovered \(acks) stored acks and \(sessions) open sessions (\(closed) closed as daemon_restart)")
        case .problem(let problem, let trackingId):
            log.warning(problem, trackingId.map(fields) ?? [:])
        }
    }

    // MARK: Store writes

    /// A write of the tracking tables, or `flushed`: a barrier that resumes once earlier writes ran.
    private enum StoreWrite: Sendable {
        case change(TrackingWrite)
        case flushed(SettleWaiter)
    }

    /// Changes the writer took and the store has not finished applying.
    private var writesInFlight = 0

    /// Tracking's writes not in the store yet: queued, being written, or refused by the store and
    /// kept for a retry (`daemon.status`'s `tracking.unstoredWrites`).
    private var unstoredWriteCount: Int {
        queuedWrites.count { if case .change = $0 { true } else { false } } + writesInFlight + failedWrites.count
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
    /// The barriers of a batch resume after the status says what the batch did.
    private func writeQueued() async {
        while !queuedWrites.isEmpty {
            let batch = queuedWrites
            queuedWrites = []
            let changes = batch.compactMap { write -> TrackingWrite? in
                if case .change(let change) = write { return change } else { return nil }
            }
            writesInFlight = changes.count
            // A batch of barriers only writes nothing (an empty transaction would report the store healthy).
            let failures = changes.isEmpty ? [] : await store.apply(changes)
            writesInFlight = 0
            var acksStored = false
            var refused: [TrackingWrite] = []
            for (change, failure) in zip(changes, failures) {
                if failure != nil { refused.append(change) }
                switch change {
                case .ack(let ack, _, _):
                    if let failure {
                        note("Cannot store a tracking ack (it is sent from memory and stored when the store takes it again): \(failure)",
                             ack.trackingId)
                    }
                    book.outbox.markStored(ack)
                    acksStored = true
                case .session(let trackingId, _, _):
                    if let failure { note("Cannot store a tracking session: \(failure)", trackingId) }
                case .deleteAck(let ack):
                    if let failure { note("Cannot delete a delivered tracking ack: \(failure)", ack.trackingId) }
                }
            }
            failedWrites.append(refused)
            // What was queued while this batch was written goes after its refused writes, as it
            // would have had they been known when it was queued (`enqueue`).
            if !refused.isEmpty, !queuedWrites.isEmpty { requeueFailedWrites() }
            if acksStored || !refused.isEmpty { startLanes() }
            if !changes.isEmpty { await publishStatus() }
            for case .flushed(let waiter) in batch { waiter.resume() }
        }
        writerRunning = false
        armRetryTimer()
    }

    /// Puts the writes that failed back at the head of the queue (they are older than any queued).
    private func requeueFailedWrites() {
        guard !failedWrites.isEmpty else { return }
        let retried = failedWrites.takeForRetry { book.outbox.contains($0) }
        queuedWrites.insert(contentsOf: retried.map(StoreWrite.change), at: 0)
    }

    /// While writes wait for a retry, one timer retries them.
    private func armRetryTimer() {
        guard !failedWrites.isEmpty, !retryTimerArmed else { return }
        retryTimerArmed = true
        // One sleeping task at a time, and only while the store refuses writes.
        work.start {
            await self.timers.sleep(for: TrackingService.storeRetryInterval) { await self.retryFailedWrites() }
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
        let waiter = SettleWaiter()
        enqueue(.flushed(waiter))
        await waiter.wait()
    }

    // MARK: Delivery

    /// Starts a lane for each session with a sendable ack and none running.
    private func startLanes() {
        guard let transport else { return }
        let connection = self.connection
        for trackingId in book.outbox.claimLanes(upTo: AckOutbox.maxLanes) {
            work.start { await self.runLane(trackingId, transport: transport, connection: connection) }
        }
    }

    /// Sends one session's acks in order until none is left or the transport is replaced, then
    /// hands its slot to another session. A drop makes the service offline: the acks stay
    /// stored until the next `setTransport`.
    private func runLane(_ trackingId: String, transport: any AckTransport, connection: Int) async {
        while connection == self.connection, let ack = book.outbox.next(for: trackingId) {
            switch await transport.emitAck(ack.payload(sentAt: clock()), timeout: ackTimeout) {
            case .acked:
                await perform(book.delivered(ack, confirmed: true))
            case .notAcked:
                await perform(book.delivered(ack, confirmed: false))
            case .notConnected:
                guard connection == self.connection else { return }
                log.debug("Tracking ack not sent: no connection; acks kept for the next one", fields(trackingId))
                self.transport = nil
                self.connection &+= 1
                book.outbox.resetLanes()
                endDrains()
                await publishStatus()
                return
            }
        }
        guard connection == self.connection else { return }
        book.outbox.endLane(trackingId)
        startLanes()
    }

    // MARK: Status and logging

    private func publishStatus() async {
        await bus.setStatus("tracking", book.status(connected: transport != nil, unstoredWrites: unstoredWriteCount))
    }

    private func note(_ problem: String, _ trackingId: String? = nil) {
        write(book.note(problem, trackingId: trackingId))
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
        /// Resumed once every event queued before it was handled and their store writes are done.
        case settled(SettleWaiter)
    }

    /// Events recorded and not handled yet.
    final class Backlog: Sendable {
        let count = Atomic<Int>(0)
    }

    let mailbox: Mailbox<Item>
    let backlog = Backlog()

    func record(_ event: TrackingEvent) {
        backlog.count.add(1, ordering: .relaxed)
        mailbox.send(.event(event))
    }

    /// Waits while at most `settleLimit` events are behind, so a status read after an action
    /// reflects it; a longer backlog (a flood of overlays) is not waited for: the read answers
    /// at once with tracking figures that may trail by those events. With `limit`, waits that
    /// long at most (tracking's thread may be slow to get the CPU while a flood keeps it busy).
    func settled(within limit: Duration? = nil) async {
        let behind = backlog.count.load(ordering: .acquiring)
        guard behind > 0, behind <= Self.settleLimit else { return }
        await waitUntilHandled(within: limit)
    }

    static let settleLimit = 256

    func keepUp() async {
        guard backlog.count.load(ordering: .acquiring) > Self.backlogLimit else { return }
        await waitUntilHandled(within: nil)
    }

    /// Waits until tracking handled the events queued so far and stored what they wrote, at most
    /// `limit` (nil: without a limit).
    private func waitUntilHandled(within limit: Duration?) async {
        let waiter = SettleWaiter()
        mailbox.send(.settled(waiter))
        let timer = limit.map { EventLoop.shared.schedule(after: $0) { waiter.resume() } }
        await waiter.wait()
        if let timer { EventLoop.shared.cancel(timer) }
    }

    /// The backlog past which the overlay pipeline waits for tracking (`keepUp`). Measured with
    /// Benchmarks/floods.py: without it, a flood of overlays left the feed's buffer holding ~9 MB.
    static let backlogLimit = 512
}
