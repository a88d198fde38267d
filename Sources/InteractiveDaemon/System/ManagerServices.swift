import Runtime

/// Runs `body` (a manager's `run()`, which runs until cancelled) until `shutdown` fires, then
/// `stop` (what the manager must finish first), then cancels `body` and waits for it.
func run(until shutdown: ShutdownSignal, _ body: @escaping @Sendable () async -> Void,
         stopping stop: @escaping @Sendable () async -> Void = {}) async {
    await withDiscardingTaskGroup { group in
        group.addTask { await body() }
        await shutdown.wait()
        await stop()
        group.cancelAll()
    }
}

// The domain's managers as services of the daemon's `ServiceGroup`. Started in the order
// tracking, overlays, predict, playback, (local API,) room, voice — each needs the ones before
// it — they stop in the reverse order: the voice room is left first, the room leaves the live
// room while tracking still delivers, and tracking writes what is queued last.

extension Tracker: Service {
    /// Runs until `shutdown`; then writes the events recorded and the writes queued.
    func run(until shutdown: ShutdownSignal) async {
        await InteractiveDaemon.run(until: shutdown, { await self.run() }, stopping: { await self.flushStore() })
    }
}

extension OverlayManager: Service {
    func run(until shutdown: ShutdownSignal) async {
        await InteractiveDaemon.run(until: shutdown, { await self.run() })
    }
}

extension PredictManager: Service {
    func run(until shutdown: ShutdownSignal) async {
        await InteractiveDaemon.run(until: shutdown, { await self.run() })
    }
}

extension PlaybackManager: Service {
    /// Runs until `shutdown`; then cancels the play requests in flight.
    func run(until shutdown: ShutdownSignal) async {
        await shutdown.wait()
        await cancelRequests()
    }
}

extension RoomController: Service {
    /// Runs until `shutdown`: joins the room kept from the previous run (`joinRestoredRoom`; call
    /// `restoreFromStore` before any client is served) and runs the room's background work; then
    /// leaves the live room and closes the connection (`shutdown()`).
    func run(until shutdown: ShutdownSignal) async {
        await InteractiveDaemon.run(until: shutdown, {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.run() }
                group.addTask { await self.joinRestoredRoom() }
            }
        }, stopping: { await self.shutdown() })
    }
}

extension VoiceManager: Service {
    /// Runs until `shutdown`: the signalling connections; then leaves the voice room and waits
    /// (bounded) for the media process to end (`shutdown()`).
    func run(until shutdown: ShutdownSignal) async {
        await InteractiveDaemon.run(until: shutdown, { await self.run() }, stopping: { await self.shutdown() })
    }
}
