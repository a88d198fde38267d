#if DEBUG || IPC_BENCH_TESTABLE
import Foundation
import IPCProtocol
@testable import InteractiveDaemon
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's real IPC stack (UnixListener, IPCServer, ClientConnection, OutboundQueue,
/// RequestRouter, EventBus), assembled as `Daemon.main` does, on a temporary socket and a
/// temporary store, with no backend connection. Only the producer differs: the benchmark calls
/// `EventBus.publish` directly, as the daemon's managers do.
@LoopActor
struct InProcessDaemon {
    let bus: EventBus
    let listener: UnixListener
    let serving: Task<Void, Never>
    let queueLimit: Int

    /// The subscriber queue limit `Daemon.main` gives the server.
    static let daemonQueueLimit = 1024

    static func start(socketPath: String, stateDirectory: String) async throws -> InProcessDaemon {
        let log = Logger(target: .stderr, minimumPriority: .warning, environment: [:])
        let store = try Store(directory: stateDirectory, log: log)
        var layers = ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: stateDirectory))
        layers.runtime = await ConfigStore.storedRuntimeLayer(store: store, log: log)
        let bus = EventBus(bootId: DeviceIdentity.randomHex(bytes: 16))
        let config = ConfigStore(layers: layers, filePath: stateDirectory + "/absent-config.json", store: store,
                                       bus: bus, log: log)
        let settings = config.settings
        let managers = DaemonManagers.assemble(store: store, bus: bus, config: config, deviceId: "ipc-bench", log: log)
        let (tracking, overlays, predict, playback, rooms) =
            (managers.tracking, managers.overlays, managers.predict, managers.playback, managers.rooms)
        let roles = RolePolicy(daemonUID: geteuid(), privilegedGroup: settings.privilegedGroup)
        let listener = try UnixListener.bind(path: socketPath)
        let reloader = ConfigReloader(config: config, bus: bus, notifier: ServiceNotifier())
        let router = RequestRouter(bus: bus, config: config, reloader: reloader, rooms: rooms, overlays: overlays, playback: playback,
                                   voice: managers.voice, version: interactivedVersion, log: log)
        let server = IPCServer(listener: listener, router: router, roles: roles, maxClients: settings.maxClients,
                               subscriberQueueLimit: daemonQueueLimit, log: log)
        let serving = Task { @LoopActor in
            await withDiscardingTaskGroup { group in
                group.addTask { await server.run() }
                group.addTask { await tracking.run() }
                group.addTask { await overlays.run() }
                group.addTask { await predict.run() }
                group.addTask { await rooms.run() }
            }
        }
        return InProcessDaemon(bus: bus, listener: listener, serving: serving, queueLimit: daemonQueueLimit)
    }

    func publish(_ type: String, _ data: JSONValue) { bus.publish(type, data) }

    /// Stops accepting, closes every connection and removes the socket (bounded by the caller).
    func stop() async {
        serving.cancel()
        await serving.value
        listener.close()
    }
}
#endif
