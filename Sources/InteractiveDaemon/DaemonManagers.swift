import Runtime
/// The daemon's state owners, wired to each other: tracking, the screen, predict, playback, the
/// room and the voice room. `Daemon.main` runs them; ipc-bench's in-process daemon assembles the same.
@LoopActor
struct DaemonManagers {
    let tracking: Tracker
    let overlays: OverlayManager
    let predict: PredictManager
    let playback: PlaybackManager
    let rooms: RoomController
    let voice: VoiceManager

    /// Builds them on `store`, `bus` and `config` (whose changes reach the room from now on).
    static func assemble(store: Store, bus: EventBus, config: ConfigStore, deviceId: String, log: Logger) -> DaemonManagers {
        let settings = config.settings
        let tracking = Tracker(
            store: store, bus: bus, log: log, deviceId: deviceId,
            context: ClientContextBase(deviceClass: settings.deviceClass, viewportWidth: settings.viewportWidth,
                                       viewportHeight: settings.viewportHeight))
        let overlays = OverlayManager(bus: bus, store: store, log: log)
        overlays.setTracker(tracking)
        let predict = PredictManager(bus: bus, store: store, overlays: overlays, log: log)
        let playback = PlaybackManager(bus: bus, log: log, settings: { config.settings })
        let rooms = RoomController(bus: bus, log: log, store: store, overlays: overlays, predict: predict,
                                   tracking: tracking, settings: settings, playback: playback)
        let voice = VoiceManager(bus: bus, log: log, settings: settings, viewerDisplayName: { rooms.session.displayName })
        config.observe { updated in
            await rooms.settingsChanged(updated)
            voice.settingsChanged(updated)
        }
        overlays.onSessionRefused { token, source in rooms.sessionRefused(token: token, source: source) }
        playback.onSessionRefused { token, source in rooms.sessionRefused(token: token, source: source) }
        return DaemonManagers(tracking: tracking, overlays: overlays, predict: predict, playback: playback, rooms: rooms, voice: voice)
    }
}
