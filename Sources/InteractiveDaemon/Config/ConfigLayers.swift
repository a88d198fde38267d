import JSONValue

/// Where the value in force of a configuration key comes from.
enum ConfigOrigin: String, Sendable {
    /// No layer sets it (its value is `null`).
    case unset
    /// The built-in default (or, for `socketUrl` and `apiUrl`, the one `environment: prod` implies).
    case `default`
    /// The configuration file.
    case file
    /// `config.set`, kept in the store.
    case runtime
    /// A command-line flag.
    case flag
}

/// The configuration as layers: defaults < file < runtime (`config.set`, kept in the store)
/// < command-line flags. Each layer holds only validated keys in normal form.
struct ConfigLayers: Sendable, Equatable {
    var defaults: JSONObject
    var file: JSONObject = [:]
    var runtime: JSONObject = [:]
    var flags: JSONObject = [:]
    /// The file as it was read at start, when it differs from `file` after a reload. Start-only
    /// keys keep the values they had at start until the daemon restarts: `nil` means `file`.
    var fileAtStart: JSONObject?

    /// The defaults layer (`ConfigDefaults`).
    static func defaults(stateDirectory: String) -> JSONObject {
        ConfigDefaults.layer(stateDirectory: stateDirectory)
    }

    /// Every key with its effective value (`null` when unset).
    var effective: JSONObject { JSONObject(resolved(pinStartOnly: true).mapValues(\.value)) }

    /// Every key with the value in force and the layer it comes from.
    var origins: [String: (value: JSONValue, origin: ConfigOrigin)] { resolved(pinStartOnly: true) }

    /// Start-only keys whose value in the file (with the flags over it) differs from the value in
    /// force, with the value that a restart would bring. Sorted by key.
    var restartNeeded: [(key: String, requested: JSONValue)] {
        let requested = resolved(pinStartOnly: false)
        let inForce = resolved(pinStartOnly: true)
        return ConfigKeys.all.filter { !$0.runtime }.map(\.name).sorted().compactMap { key in
            let wanted = requested[key]?.value ?? .null
            return wanted == (inForce[key]?.value ?? .null) ? nil : (key, wanted)
        }
    }

    /// Merges the layers key by key. With `pinStartOnly`, start-only keys read the file as it was
    /// at start; without, they read the current file (what a restart would use).
    private func resolved(pinStartOnly: Bool) -> [String: (value: JSONValue, origin: ConfigOrigin)] {
        var merged: [String: (value: JSONValue, origin: ConfigOrigin)] = [:]
        for key in ConfigKeys.all {
            let fileLayer = pinStartOnly && !key.runtime ? (fileAtStart ?? file) : file
            var entry: (value: JSONValue, origin: ConfigOrigin) = (.null, .unset)
            for (origin, layer) in [(ConfigOrigin.default, defaults), (.file, fileLayer), (.runtime, runtime), (.flag, flags)] {
                guard let value = layer[key.name] else { continue }
                entry = (ConfigLayers.merge(entry.origin == .unset ? nil : entry.value, value), origin)
            }
            merged[key.name] = entry
        }
        if merged["environment"]?.value == "prod" {
            for (key, url) in [("socketUrl", ConfigDefaults.prodSocketURL), ("apiUrl", ConfigDefaults.prodAPIURL)]
            where merged[key]?.origin == .unset {
                merged[key] = (.string(url), .default)
            }
        }
        return merged
    }

    private static func merge(_ lower: JSONValue?, _ upper: JSONValue) -> JSONValue {
        guard case .object(var base)? = lower, case .object(let over) = upper else { return upper }
        for (key, value) in over { base[key] = value }
        return .object(base)
    }

    /// Validates a whole object (the file or the flags): unknown keys and bad values are errors.
    static func validate(_ object: JSONObject) throws(ConfigError) -> JSONObject {
        var normal: JSONObject = [:]
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
    func patchedRuntime(_ patch: JSONObject) throws(ConfigError) -> JSONObject {
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
