import IPCProtocol
import JSONValue

/// Why a configuration value was refused. Always names the key.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(key: String, reason: String)
    case unknownKey(String)
    case startOnly(String)
    /// `config.set` of a key that a command-line flag sets: the flag takes precedence.
    case overriddenByFlag(key: String, flag: String)
    case unreadableFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let key, let reason): return "invalid value for '\(key)': \(reason)"
        case .unknownKey(let key): return "unknown configuration key '\(key)'"
        case .startOnly(let key): return "'\(key)' can only be set at start (configuration file or flag), not at runtime"
        case .overriddenByFlag(let key, let flag):
            return "'\(key)' is set by the command-line flag \(flag), which takes precedence over config.set: "
                + "the daemon keeps the flag's value (restart it without \(flag) to set '\(key)' at runtime)"
        case .unreadableFile(let path, let reason): return "cannot read configuration file \(path): \(reason)"
        }
    }

    /// The key the error is about, if any.
    public var key: String? {
        switch self {
        case .invalid(let key, _), .startOnly(let key), .unknownKey(let key), .overriddenByFlag(let key, _): return key
        case .unreadableFile: return nil
        }
    }
}

/// One configuration key: whether `config.set` may change it and how its values are checked.
struct ConfigKey: Sendable {
    let name: String
    let runtime: Bool
    /// A secret (`voiceApiSecret`, `voiceToken`, `voiceIce`): shown as `"(set)"` wherever values leave the daemon.
    let secret: Bool
    /// Checks a value and returns it in normal form. `null` never reaches it. The validators
    /// throw only `ConfigError` (untyped closures: typed-throws closures crash the 6.3 compiler).
    let validator: @Sendable (JSONValue) throws -> JSONValue

    init(name: String, runtime: Bool, secret: Bool = false, validator: @escaping @Sendable (JSONValue) throws -> JSONValue) {
        self.name = name
        self.runtime = runtime
        self.secret = secret
        self.validator = validator
    }

    /// The value in normal form, or the reason it is refused.
    func normalize(_ value: JSONValue) throws(ConfigError) -> JSONValue {
        do {
            return try validator(value)
        } catch let error as ConfigError {
            throw error
        } catch {
            throw .invalid(key: name, reason: String(describing: error))
        }
    }
}

/// Every key of IPC.md's configuration table.
enum ConfigKeys {
    static let all: [ConfigKey] = [
        ConfigKey(name: "environment", runtime: true) { value in
            try oneOf(value, key: "environment", ["dev", "stg", "prod"])
        },
        ConfigKey(name: "tenant", runtime: true) { value in try nonEmptyString(value, key: "tenant") },
        ConfigKey(name: "os", runtime: true) { value in try nonEmptyString(value, key: "os") },
        ConfigKey(name: "deviceClass", runtime: true) { value in try nonEmptyString(value, key: "deviceClass") },
        ConfigKey(name: "viewport", runtime: true) { value in
            try object(value, key: "viewport", fields: ["width": positiveInt(max: 100_000), "height": positiveInt(max: 100_000)])
        },
        ConfigKey(name: "socketUrl", runtime: true) { value in
            try url(value, key: "socketUrl", schemes: ["ws", "wss", "http", "https"])
        },
        ConfigKey(name: "apiUrl", runtime: true) { value in try url(value, key: "apiUrl", schemes: ["http", "https"]) },
        ConfigKey(name: "leaderboardUrl", runtime: true) { value in
            try url(value, key: "leaderboardUrl", schemes: ["http", "https"])
        },
        ConfigKey(name: "httpTimeoutMs", runtime: true) { value in
            try integer(value, key: "httpTimeoutMs", range: 100...600_000)
        },
        ConfigKey(name: "statusWaitMs", runtime: true) { value in
            try integer(value, key: "statusWaitMs", range: 0...600_000)
        },
        ConfigKey(name: "answerConfirmTimeoutMs", runtime: true) { value in
            try integer(value, key: "answerConfirmTimeoutMs", range: 100...3_600_000)
        },
        ConfigKey(name: "playbackUrl", runtime: true) { value in
            try url(value, key: "playbackUrl", schemes: ["http", "https"])
        },
        ConfigKey(name: "playbackTimeoutMs", runtime: true) { value in
            try integer(value, key: "playbackTimeoutMs", range: 100...600_000)
        },
        ConfigKey(name: "scenarioMaxBytes", runtime: true) { value in
            try integer(value, key: "scenarioMaxBytes", range: 65_536...16_777_216)
        },
        ConfigKey(name: "rememberSession", runtime: true) { value in try boolean(value, key: "rememberSession") },
        ConfigKey(name: "caFile", runtime: true) { value in try nonEmptyString(value, key: "caFile") },
        ConfigKey(name: "insecureTLS", runtime: true) { value in try boolean(value, key: "insecureTLS") },
        ConfigKey(name: "protocol", runtime: true) { value in try oneOf(value, key: "protocol", ["v4", "v2"]) },
        ConfigKey(name: "reconnect", runtime: true) { value in
            let normal = try object(value, key: "reconnect", fields: [
                "baseMs": positiveInt(max: 3_600_000), "capMs": positiveInt(max: 3_600_000), "factor": number(1...100),
            ])
            if let base = normal["baseMs"]?.intValue, let cap = normal["capMs"]?.intValue, cap < base {
                throw ConfigError.invalid(key: "reconnect", reason: "capMs must not be smaller than baseMs")
            }
            return normal
        },
        ConfigKey(name: "stateDirectory", runtime: false) { value in
            let path = try nonEmptyString(value, key: "stateDirectory")
            guard path.stringValue?.hasPrefix("/") == true else {
                throw ConfigError.invalid(key: "stateDirectory", reason: "must be an absolute path")
            }
            return path
        },
        ConfigKey(name: "maxClients", runtime: false) { value in
            try integer(value, key: "maxClients", range: 1...65_536)
        },
        ConfigKey(name: "privilegedGroup", runtime: false) { value in
            try nonEmptyString(value, key: "privilegedGroup")
        },
        ConfigKey(name: "logTarget", runtime: false) { value in
            try oneOf(value, key: "logTarget", ["auto", "journal", "stderr"])
        },
        ConfigKey(name: "voiceUrl", runtime: true) { value in try url(value, key: "voiceUrl", schemes: ["ws", "wss"]) },
        ConfigKey(name: "voiceApiSecret", runtime: true, secret: true) { value in try nonEmptyString(value, key: "voiceApiSecret") },
        ConfigKey(name: "voiceToken", runtime: true, secret: true) { value in try nonEmptyString(value, key: "voiceToken") },
        ConfigKey(name: "voiceCreateRooms", runtime: true) { value in try boolean(value, key: "voiceCreateRooms") },
        // Pipelines name files and devices: never from config.set.
        ConfigKey(name: "voiceSource", runtime: false) { value in try nonEmptyString(value, key: "voiceSource") },
        ConfigKey(name: "voiceSink", runtime: false) { value in try nonEmptyString(value, key: "voiceSink") },
        ConfigKey(name: "voiceEchoCancel", runtime: false) { value in try boolean(value, key: "voiceEchoCancel") },
        // A secret: TURN URLs carry their credentials (`turn:user:password@host`).
        ConfigKey(name: "voiceIce", runtime: true, secret: true) { value in try iceServers(value, key: "voiceIce") },
    ]

    static let byName: [String: ConfigKey] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// Keys that hold objects merged member by member.
    static let objectKeys: Set<String> = ["viewport", "reconnect"]

    /// What a secret's value is shown as.
    static let secretShown: JSONValue = "(set)"

    /// `values` as they may be shown (`config.get`, `config.changed`, the status, logs): every
    /// secret that is set (not null, not an empty list) as `"(set)"`.
    static func shown(_ values: JSONObject) -> JSONObject {
        var shown = values
        for key in all where key.secret {
            if let value = shown[key.name], !value.isNull, value.arrayValue?.isEmpty != true { shown[key.name] = secretShown }
        }
        return shown
    }

    /// The most ICE servers `voiceIce` may list.
    static let maxIceServers = 16

    // MARK: Validators

    typealias FieldCheck = @Sendable (JSONValue, String) throws -> JSONValue

    static func nonEmptyString(_ value: JSONValue, key: String) throws(ConfigError) -> JSONValue {
        guard let text = value.stringValue, !text.isEmpty else { throw .invalid(key: key, reason: "expected a non-empty string") }
        guard !text.containsControlCharacters else {
            throw .invalid(key: key, reason: "must not contain control characters (line breaks, NUL, …)")
        }
        return value
    }

    static func oneOf(_ value: JSONValue, key: String, _ allowed: [String]) throws(ConfigError) -> JSONValue {
        guard let text = value.stringValue, allowed.contains(text) else {
            throw .invalid(key: key, reason: "expected one of \(allowed.joined(separator: ", "))")
        }
        return value
    }

    static func boolean(_ value: JSONValue, key: String) throws(ConfigError) -> JSONValue {
        guard case .bool = value else { throw .invalid(key: key, reason: "expected true or false") }
        return value
    }

    static func integer(_ value: JSONValue, key: String, range: ClosedRange<Int>) throws(ConfigError) -> JSONValue {
        guard let number = value.lenientDouble, number.rounded() == number, let int = Int(exactly: number), range.contains(int) else {
            throw .invalid(key: key, reason: "expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return .number(Double(int))
    }

    static func positiveInt(max: Int) -> FieldCheck {
        { value, key in try integer(value, key: key, range: 1...max) }
    }

    static func number(_ range: ClosedRange<Double>) -> FieldCheck {
        { value, key in
            guard let number = value.lenientDouble, range.contains(number) else {
                throw ConfigError.invalid(key: key, reason: "expected a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return .number(number)
        }
    }

    static func object(_ value: JSONValue, key: String, fields: [String: FieldCheck]) throws(ConfigError) -> JSONValue {
        guard case .object(let members) = value else {
            throw .invalid(key: key, reason: "expected an object with \(fields.keys.sorted().joined(separator: ", "))")
        }
        var normal: JSONObject = [:]
        for (name, member) in members {
            guard let check = fields[name] else { throw .invalid(key: "\(key).\(name)", reason: "unknown member") }
            if member.isNull { continue }
            do {
                normal[name] = try check(member, "\(key).\(name)")
            } catch let error as ConfigError {
                throw error
            } catch {
                throw .invalid(key: "\(key).\(name)", reason: String(describing: error))
            }
        }
        return .object(normal)
    }

    /// A list of STUN and TURN server URLs (`stun:`, `stuns:`, `turn:`, `turns:`), at most
    /// `maxIceServers`, each a single word of at most 512 bytes.
    static func iceServers(_ value: JSONValue, key: String) throws(ConfigError) -> JSONValue {
        guard let list = value.arrayValue, list.count <= maxIceServers else {
            throw .invalid(key: key, reason: "expected a list of at most \(maxIceServers) stun:, stuns:, turn: or turns: URLs")
        }
        for entry in list {
            guard let text = entry.stringValue, text.utf8.count <= 512,
                  let colon = text.firstIndex(of: ":"), ["stun", "stuns", "turn", "turns"].contains(text[..<colon].lowercased()),
                  text.index(after: colon) < text.endIndex,
                  !text.unicodeScalars.contains(where: { $0.isControlCharacter || $0.properties.isWhitespace }) else {
                throw .invalid(key: key, reason: "expected stun:, stuns:, turn: or turns: URLs without spaces (at most 512 bytes each)")
            }
        }
        return value
    }

    static func url(_ value: JSONValue, key: String, schemes: [String]) throws(ConfigError) -> JSONValue {
        guard let text = value.stringValue, let endpoint = EndpointURL(text), schemes.contains(endpoint.scheme) else {
            throw .invalid(key: key, reason: "expected an absolute URL with scheme \(schemes.joined(separator: ", "))")
        }
        return value
    }
}

/// The parts of an absolute URL the daemon needs to check; strict, no guessing. Read byte by
/// byte (UTF-8): every overlay's template URL is checked on the display path.
struct EndpointURL: Sendable, Equatable {
    let scheme: String
    let host: String

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        // Scalar by scalar only when the text is not ASCII.
        if bytes.allSatisfy({ $0 < 0x80 }) {
            guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return nil }
        } else {
            guard !text.unicodeScalars.contains(where: Self.isRefused) else { return nil }
        }
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        guard let schemeEnd = bytes.indices.first(where: {
            bytes[$0] == colon && $0 + 2 < bytes.count && bytes[$0 + 1] == slash && bytes[$0 + 2] == slash
        }) else { return nil }
        let rest = bytes[(schemeEnd + 3)...]
        let authority = rest.prefix { $0 != slash && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        let hostPart = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority
        let host: ArraySlice<UInt8>
        if hostPart.first == UInt8(ascii: "[") {
            guard let close = hostPart.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = hostPart[(hostPart.startIndex + 1)..<close]
        } else {
            host = hostPart.prefix { $0 != colon }
        }
        guard schemeEnd > 0, !host.isEmpty else { return nil }
        self.scheme = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        self.host = String(decoding: host, as: UTF8.self)
    }

    /// White space and control characters make a text no URL.
    private static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value <= 0x20 || scalar.value == 0x7F }
        return scalar.isControlCharacter || scalar.properties.isWhitespace
    }
}
