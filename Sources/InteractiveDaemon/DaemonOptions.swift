import JSONValue

/// The daemon's command line.
public struct DaemonOptions: Sendable, Equatable {
    public var configPath: String?
    public var socketPath: String?
    /// Configuration keys given as flags (the top layer).
    public var flagLayer: JSONObject = [:]
    public var showHelp = false
    public var showVersion = false
    /// `--check-config [FILE]`: the file to check ("" for the one the daemon would read), or nil.
    public var checkConfig: String?

    /// Flags that set a configuration key, and the key.
    static let keyFlags: [String: String] = [
        "--state-directory": "stateDirectory", "--socket-url": "socketUrl", "--api-url": "apiUrl",
        "--leaderboard-url": "leaderboardUrl", "--log-target": "logTarget", "--environment": "environment",
        "--tenant": "tenant", "--os": "os",
    ]

    public static let usage = """
        Usage: interactived [options]

        The Interactive daemon: keeps the realtime connection to the Interactive backend and
        streams what to render to local players over a JSON-lines Unix socket.

        Options:
          --config PATH           configuration file (default $INTERACTIVED_CONFIG, else /etc/interactived/config.json)
          --socket PATH           local API socket (default $INTERACTIVED_SOCKET, else /run/interactived/interactived.sock
                                  as root, else $XDG_RUNTIME_DIR/interactived.sock)
          --state-directory DIR   where the store lives
          --socket-url URL        Socket.IO server origin (ws://, wss://, http://, https://)
          --api-url URL           REST API origin
          --leaderboard-url URL   leaderboard page
          --environment ENV       dev, stg or prod
          --tenant ID             tenant id
          --os NAME               platform string sent to the backend
          --log-target TARGET     auto, journal or stderr
          --check-config [FILE]   check FILE (default: the configuration file above) and the flags,
                                  then exit: 0 if valid, 78 naming the key and the reason; opens no
                                  socket and no store
          --version               print the version and exit
          -h, --help              print this help and exit

        Signals: SIGTERM/SIGINT stop gracefully; SIGHUP reloads the configuration file (so does
        'interactivectl reload', which waits for the outcome). Start-only keys (stateDirectory,
        maxClients, privilegedGroup, logTarget) changed in the file apply after a restart.
        Exit status: 0 stopped cleanly, 64 bad usage, 78 invalid configuration, 73 cannot create the
        state directory or store, 69 cannot listen on the socket or watch the signals.
        """

    /// Parses arguments (without the program name). Flag values are validated later, as
    /// configuration keys.
    public static func parse(_ arguments: [String]) throws(DaemonUsageError) -> DaemonOptions {
        var options = DaemonOptions()
        var remaining = arguments[...]
        while let first = remaining.popFirst() {
            var argument = first
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            switch argument {
            case "-h", "--help": options.showHelp = true
            case "--version": options.showVersion = true
            case "--config": options.configPath = try takeValue(of: argument, inline: inlineValue, from: &remaining)
            case "--socket": options.socketPath = try takeValue(of: argument, inline: inlineValue, from: &remaining)
            case "--check-config":
                // The file is optional: the next argument is it unless it is an option.
                if let inlineValue {
                    options.checkConfig = inlineValue
                } else if let next = remaining.first, !next.hasPrefix("-") {
                    options.checkConfig = next
                    remaining = remaining.dropFirst()
                } else {
                    options.checkConfig = ""
                }
            default:
                guard let key = keyFlags[argument] else { throw DaemonUsageError(message: "unknown option \(argument)") }
                options.flagLayer[key] = .string(try takeValue(of: argument, inline: inlineValue, from: &remaining))
            }
        }
        return options
    }
}

extension DaemonOptions {
    /// The flag that sets configuration key `key`, if one does.
    static func flag(forKey key: String) -> String? {
        keyFlags.first { $0.value == key }?.key
    }

    private static func takeValue(of flag: String, inline: String?, from remaining: inout ArraySlice<String>)
        throws(DaemonUsageError) -> String
    {
        if let inline { return inline }
        guard let value = remaining.popFirst() else { throw DaemonUsageError(message: "\(flag) needs a value") }
        return value
    }
}

/// A command line the daemon cannot use.
public struct DaemonUsageError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
