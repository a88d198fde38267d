import JSONValue

/// The configuration file: a JSON object of IPC.md's keys.
enum ConfigFile {
    /// The file's path: `--config`, else `$INTERACTIVED_CONFIG`, else the system path.
    static func path(flag: String?, environment: [String: String]) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let env = environment["INTERACTIVED_CONFIG"], !env.isEmpty { return env }
        return "/etc/interactived/config.json"
    }

    /// The validated keys of the file; a missing file means no keys.
    static func load(path: String) throws(ConfigError) -> JSONObject {
        guard LocalFiles.exists(atPath: path) else { return [:] }
        guard let data = LocalFiles.contents(atPath: path) else {
            throw .unreadableFile(path: path, reason: "permission denied or not a regular file")
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(data)
        } catch {
            throw .unreadableFile(path: path, reason: error.description)
        }
        guard case .object(let members) = value else {
            throw .unreadableFile(path: path, reason: "the top level must be a JSON object")
        }
        return try ConfigLayers.validate(members)
    }
}
