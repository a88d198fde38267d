import IPCProtocol
import JSONValue
import Runtime

/// Owns the configuration: its layers, the effective settings, `config.set` (kept in the
/// store), reloads of the file, and `config.changed` events.
@LoopActor
final class ConfigStore {

    private static let runtimeSettingKey = "runtimeConfig"

    private var layers: ConfigLayers
    /// The configuration file's path.
    let filePath: String
    private let store: Store
    private let bus: EventBus
    private let log: Logger
    private var observer: ((Settings) async -> Void)?

    private(set) var settings: Settings

    init(layers: ConfigLayers, filePath: String, store: Store, bus: EventBus, log: Logger) {
        var layers = layers
        layers.fileAtStart = layers.file
        self.layers = layers
        self.filePath = filePath
        self.store = store
        self.bus = bus
        self.log = log
        settings = Settings(layers.effective)
        bus.setStatus("config", .object(ConfigKeys.shown(layers.effective)))
    }

    /// Reads the runtime layer kept in the store. Keys that are no longer valid are dropped
    /// with a warning instead of stopping the daemon.
    static func storedRuntimeLayer(store: Store, log: Logger) async -> JSONObject {
        let stored: JSONValue?
        do {
            stored = try await store.setting(runtimeSettingKey)
        } catch {
            log.error("Cannot read the runtime configuration from the store: \(error)")
            return [:]
        }
        guard case .object(let members)? = stored else { return [:] }
        var layer: JSONObject = [:]
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

    /// The effective configuration, every key (unset ones as null; secrets as `"(set)"`).
    func effective() -> JSONValue { .object(ConfigKeys.shown(layers.effective)) }

    /// Every key as `{value, origin}` (origin: `default`, `file`, `runtime`, `flag` or `unset`);
    /// a start-only key the file changed since start also has `pending`, the value a restart brings.
    func effectiveWithOrigins() -> JSONValue {
        let pending = Dictionary(uniqueKeysWithValues: layers.restartNeeded.map { ($0.key, $0.requested) })
        var members: JSONObject = [:]
        for (key, entry) in layers.origins {
            let value = ConfigKeys.shown([key: entry.value])[key] ?? entry.value
            var described: JSONObject = ["value": value, "origin": .string(entry.origin.rawValue)]
            if let requested = pending[key] { described["pending"] = requested }
            members[key] = .object(described)
        }
        return .object(members)
    }

    /// Applies a `config.set` patch from `client`; returns the new effective configuration. When
    /// the store cannot keep it (a full or read-only state directory), it is in force until the
    /// daemon stops.
    func set(_ patch: JSONObject, by client: ClientContext) async throws -> JSONValue {
        let runtime = try layers.patchedRuntime(patch)
        do {
            try await store.setSetting(Self.runtimeSettingKey, .object(runtime))
        } catch {
            log.warning("The runtime configuration is in force but not kept across a restart: cannot store it (\(error))")
        }
        var updated = layers
        updated.runtime = runtime
        let shown = ConfigKeys.shown(updated.effective)
        let changes = patch.keys.sorted().map { "\($0)=\((shown[$0] ?? .null).jsonText)" }.joined(separator: " ")
        log.notice("Runtime configuration set by \(client.logDescription): \(changes)",
                   client.logFields.merging(["INTERACTIVE_CONFIG_KEYS": patch.keys.sorted().joined(separator: ",")]),
                   id: .configSet)
        await apply(updated)
        return .object(ConfigKeys.shown(layers.effective))
    }

    /// Re-reads the configuration file (SIGHUP, `daemon.reload`). An invalid file keeps the old
    /// configuration; start-only keys keep their running values until a restart.
    func reloadFile() async -> Result<ConfigReload, ConfigError> {
        let fileFields: LogFields = ["INTERACTIVE_CONFIG_FILE": filePath]
        var updated = layers
        do {
            updated.file = try ConfigFile.load(path: filePath)
        } catch {
            log.error("Configuration file \(filePath) not reloaded, keeping the running configuration: \(error)",
                      fileFields.merging(["INTERACTIVE_CONFIG_KEY": error.key ?? ""]), id: .configRejected)
            bus.setStatusMember("daemon", "configError", .string(error.description))
            return .failure(error)
        }
        let pendingBefore = Set(layers.restartNeeded.map(\.key))
        let inForce = layers.effective
        let changed = await apply(updated)
        let pending = layers.restartNeeded
        for (key, requested) in pending where !pendingBefore.contains(key) {
            log.warning("\(key) changed to \(requested.jsonText) in \(filePath); it applies only at start: "
                        + "\(inForce[key]?.jsonText ?? "null") stays in force until interactived restarts",
                        fileFields.merging(["INTERACTIVE_CONFIG_KEY": key]), id: .restartNeeded)
        }
        bus.setStatusMember("daemon", "configError", .null)
        bus.setStatusMember("daemon", "restartNeeded", .array(pending.map { .string($0.key) }))
        let summary = changed.isEmpty ? "nothing changed" : "changed: " + changed.joined(separator: ", ")
        log.notice("Configuration file \(filePath) reloaded; \(summary)", fileFields, id: .configReloaded)
        return .success(ConfigReload(changed: changed, restartNeeded: pending.map(\.key)))
    }

    /// Sets who applies the settings after every change. `config.set` and a reload return only
    /// after it did, so a call that follows a `config.set` reply already sees the new settings.
    func observe(_ observer: @escaping (Settings) async -> Void) { self.observer = observer }

    /// Puts `updated` in force; returns the keys whose effective value changed.
    @discardableResult
    private func apply(_ updated: ConfigLayers) async -> [String] {
        let before = layers.effective
        layers = updated
        let after = layers.effective
        settings = Settings(after)
        var changed: JSONObject = [:]
        for (key, value) in after where before[key] != value { changed[key] = value }
        guard !changed.isEmpty else { return [] }
        if changed["insecureTLS"] == true {
            log.warning("insecureTLS is on: TLS certificates are not verified (development only)")
        }
        bus.publish(ConfigChangedEvent(changes: ConfigKeys.shown(changed)), section: "config", status: .object(ConfigKeys.shown(after)))
        await observer?(settings)
        return changed.keys.sorted()
    }
}

/// What a reload of the configuration file did.
struct ConfigReload: Sendable, Equatable {
    /// Keys whose value in force changed.
    let changed: [String]
    /// Start-only keys the file changes: they apply after a restart.
    let restartNeeded: [String]
}
