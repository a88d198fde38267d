import JSONValue

/// The configuration as layers: defaults < file < runtime (`config.set`, kept in the store)
/// < command-line flags. Each layer holds only validated keys in normal form.
struct ConfigLayers: Sendable, Equatable {
    var defaults: [String: JSONValue]
    var file: [String: JSONValue] = [:]
    var runtime: [String: JSONValue] = [:]
    var flags: [String: JSONValue] = [:]

    /// The prod URLs; dev and stg have none built in.
    static let prodSocketURL = "wss://wsk.onplay.live"
    static let prodAPIURL = "https://api.onplay.live"

    static func defaults(stateDirectory: String) -> [String: JSONValue] {
        [
            "deviceClass": "settopbox",
            "viewport": ["width": 1920, "height": 1080],
            "httpTimeoutMs": 10000,
            "insecureTLS": false,
            "protocol": "v4",
            "reconnect": ["baseMs": 500, "capMs": 30000, "factor": 2],
            "stateDirectory": .string(stateDirectory),
            "maxClients": 1024,
            "privilegedGroup": "interactive",
            "logTarget": "auto",
        ]
    }

    /// Every key with its effective value (`null` when unset).
    var effective: [String: JSONValue] {
        var merged: [String: JSONValue] = [:]
        for layer in [defaults, file, runtime, flags] {
            for (key, value) in layer { merged[key] = ConfigLayers.merge(merged[key], value) }
        }
        if merged["environment"] == "prod" {
            if merged["socketUrl"] == nil { merged["socketUrl"] = .string(ConfigLayers.prodSocketURL) }
            if merged["apiUrl"] == nil { merged["apiUrl"] = .string(ConfigLayers.prodAPIURL) }
        }
        for key in ConfigKeys.all where merged[key.name] == nil { merged[key.name] = .null }
        return merged
    }

    private static func merge(_ lower: JSONValue?, _ upper: JSONValue) -> JSONValue {
        guard case .object(var base)? = lower, case .object(let over) = upper else { return upper }
        for (key, value) in over { base[key] = value }
        return .object(base)
    }

    /// Validates a whole object (the file or the flags): unknown keys and bad values are errors.
    static func validate(_ object: [String: JSONValue]) throws(ConfigError) -> [String: JSONValue] {
        var normal: [String: JSONValue] = [:]
        for (name, value) in object {
            guard let key = ConfigKeys.byName[name] else { throw .unknownKey(name) }
            if value.isNull { continue }
            normal[name] = try key.normalize(value)
        }
        return normal
    }

    /// Applies a `config.set` patch to the runtime layer: keys merge one by one, `null` drops
    /// an override, start-only keys and keys a command-line flag sets are refused. Returns the new
    /// runtime layer.
    func patchedRuntime(_ patch: [String: JSONValue]) throws(ConfigError) -> [String: JSONValue] {
        var runtime = self.runtime
        for (name, value) in patch.sorted(by: { $0.key < $1.key }) {
            guard let key = ConfigKeys.byName[name] else { throw .unknownKey(name) }
            guard key.runtime else { throw .startOnly(name) }
            if flags[name] != nil, !value.isNull {
                throw .overriddenByFlag(key: name, flag: DaemonOptions.flag(forKey: name) ?? "--\(name)")
            }
            if value.isNull {
                runtime.removeValue(forKey: name)
                continue
            }
            var normal = try key.normalize(value)
            if ConfigKeys.objectKeys.contains(name) {
                // Merge with the lower layers so that a partial object is checked as a whole.
                var partialLayers = self
                partialLayers.runtime = runtime
                let below = partialLayers.effective[name]
                if case .object(var merged)? = below, case .object(let over) = normal {
                    for (member, memberValue) in over { merged[member] = memberValue }
                    normal = try key.normalize(.object(merged))
                }
            }
            runtime[name] = normal
        }
        return runtime
    }
}
