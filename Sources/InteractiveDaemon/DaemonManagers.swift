/// The daemon's state owners, wired to each other: tracking, the screen, predict, playback and
/// the room. `Daemon.main` runs them; ipc-bench's in-process daemon assembles the same.
struct DaemonManagers: Sendable {
    let tracking: TrackingService
    let overlays: OverlayManager
    let predict: PredictManager
    let playback: PlaybackManager
    let rooms: RoomController

    /// Builds them on `store`, `bus` and `config` (whose changes reach the room from now on).
    static func assemble(store: Store, bus: EventBus, config: ConfigStore, deviceId: String, log: Logger) async -> DaemonManagers {
        let settings = await config.settings
        let tracking = TrackingService(
            store: store, bus: bus, log: log, deviceId: deviceId,
            context: ClientContextBase(deviceClass: settings.deviceClass, viewportWidth: settings.viewportWidth,
                                       viewportHeight: settings.viewportHeight))
        let overlays = OverlayManager(bus: bus, store: store, log: log)
        await overlays.setTracker(tracking.feed)
        let predict = PredictManager(bus: bus, store: store, overlays: overlays, log: log)
        let playback = await PlaybackManager(bus: bus, log: log, settings: { await config.settings })
        let rooms = await RoomController(bus: bus, log: log, store: store, overlays: overlays, predict: predict,
                                         tracking: tracking, settings: settings, playback: playback)
        await config.observe { updated in await rooms.settingsChanged(updated) }
        return DaemonManagers(tracking: tracking, overlays: overlays, predict: predict, playback: playback, rooms: rooms)
    }
}
