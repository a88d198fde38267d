import IPCProtocol
import JSONValue

/// Owns the configuration: its layers, the effective settings, `config.set` (kept in the
/// store), reloads of the file, and `config.changed` events.
actor ConfigStore {
    private static let runtimeSettingKey = "runtimeConfig"

    private var layers: ConfigLayers
    private let filePath: String
    private let store: Store
    private let bus: EventBus
    private let log: Logger
    private var observer: (@Sendable (Settings) async -> Void)?

    private(set) var settings: Settings

    init(layers: ConfigLayers, filePath: String, store: Store, bus: EventBus, log: Logger) async {
        self.layers = layers
        self.filePath = filePath
        self.store = store
        self.bus = bus
        self.log = log
        settings = Settings(layers.effective)
        await bus.setStatus("config", .object(layers.effective))
    }

    /// Reads the runtime layer kept in the store. Keys that are no longer valid are dropped
    /// with a warning instead of stopping the daemon.
    static func storedRuntimeLayer(store: Store, log: Logger) async -> [String: JSONValue] {
        let stored: JSONValue?
        do {
            stored = try await store.setting(runtimeSettingKey)
        } catch {
            log.error("Cannot read the runtime configuration from the store: \(error)")
            return [:]
        }
        guard case .object(let members)? = stored else { return [:] }
        var layer: [String: JSONValue] = [:]
        for (name, value) in members {
            guard let key = ConfigKeys.byName[name], key.runtime else {
                log.warning("Dropping stored runtime configuration key '\(name)': not a runtime key")
                continue
            }
            do {
                layer[name] = try key.normalize(value)
            } catch {
                log.warning("Dropping stored runtime configuration key '\(name)': \(error)")
            }
        }
        return layer
    }

    /// The effective configuration, every key (unset ones as null).
    func effective() -> JSONValue { .object(layers.effective) }

    /// Applies a `config.set` patch; returns the new effective configuration. When the store
    /// cannot keep it (a full or read-only state directory), it is in force until the daemon stops.
    func set(_ patch: [String: JSONValue]) async throws -> JSONValue {
        let runtime = try layers.patchedRuntime(patch)
        do {
            try await store.setSetting(Self.runtimeSettingKey, .object(runtime))
        } catch {
            log.warning("The runtime configuration is in force but not kept across a restart: cannot store it (\(error))")
        }
        var updated = layers
        updated.runtime = runtime
        await apply(updated, reason: "config.set")
        return .object(layers.effective)
    }

    /// Re-reads the configuration file (SIGHUP). An invalid file keeps the old configuration.
    func reloadFile() async -> ConfigError? {
        do {
            var updated = layers
            updated.file = try ConfigFile.load(path: filePath)
            await apply(updated, reason: "reload")
            log.notice("Configuration file reloaded", ["INTERACTIVE_CONFIG_FILE": filePath], id: .configReloaded)
            return nil
        } catch {
            log.error("Configuration file not reloaded, keeping the old configuration: \(error)",
                      ["INTERACTIVE_CONFIG_FILE": filePath], id: .configRejected)
            return error
        }
    }

    /// Sets who applies the settings after every change. `config.set` and a reload return only
    /// after it did, so a call that follows a `config.set` reply already sees the new settings.
    func observe(_ observer: @escaping @Sendable (Settings) async -> Void) { self.observer = observer }

    private func apply(_ updated: ConfigLayers, reason: String) async {
        let before = layers.effective
        layers = updated
        let after = layers.effective
        settings = Settings(after)
        var changed: [String: JSONValue] = [:]
        for (key, value) in after where before[key] != value { changed[key] = value }
        guard !changed.isEmpty else { return }
        if changed["insecureTLS"] == true {
            log.warning("insecureTLS is on: TLS certificates are not verified (development only)")
        }
        await bus.publish(EventType.configChanged, .object(changed), section: "config", status: .object(after))
        await observer?(settings)
    }
}
