import IPCProtocol
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's version, sent in `daemon.hello` and as tracking's `sdkVersion`.
public let interactivedVersion = "0.1.0"

/// Exit statuses (sysexits.h).
public enum DaemonExit: Int32 {
    case ok = 0
    case usage = 64
    case unavailable = 69
    case cannotCreate = 73
    case config = 78
}

/// Starts the daemon, runs it until SIGTERM/SIGINT, and stops it gracefully.
public enum Daemon {
    /// How long the services may take to stop gracefully before they are cancelled, and when
    /// the process is killed (SIGALRM) even if one ignores its cancellation.
    static let shutdownGracePeriod: Duration = .seconds(4)
    static let shutdownDeadline: Duration = .seconds(5)

    @LoopActor
    public static func main(arguments: [String], environment: [String: String]) async -> DaemonExit {
        let options: DaemonOptions
        do {
            options = try DaemonOptions.parse(arguments)
        } catch {
            printError("interactived: \(error)\nTry 'interactived --help'.")
            return .usage
        }
        if options.showHelp {
            print(DaemonOptions.usage)
            return .ok
        }
        if options.showVersion {
            print("interactived \(interactivedVersion)")
            return .ok
        }

        if let checked = options.checkConfig {
            return checkConfiguration(explicitFile: checked, options: options, environment: environment)
        }

        // Configuration: defaults < file < runtime (store) < flags. Invalid at start: exit 78.
        let configPath = ConfigFile.path(flag: options.configPath, environment: environment)
        var layers = ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: defaultStateDirectory(environment)))
        do {
            layers.file = try ConfigFile.load(path: configPath)
            layers.flags = try ConfigLayers.validate(options.flagLayer)
        } catch {
            printError("interactived: \(error)")
            return .config
        }
        let startSettings = Settings(layers.effective)
        let log = Logger(target: startSettings.logTarget, environment: environment)

        let store: Store
        do {
            store = try Store(directory: startSettings.stateDirectory, log: log)
        } catch {
            log.error("Cannot open the store in \(startSettings.stateDirectory): \(error)")
            printErrorIfJournal(log, "interactived: cannot open the store in \(startSettings.stateDirectory): \(error)")
            return .cannotCreate
        }
        layers.runtime = await ConfigStore.storedRuntimeLayer(store: store, log: log)

        let bootId = DeviceIdentity.randomHex(bytes: 16)
        let bus = EventBus(bootId: bootId)
        let config = ConfigStore(layers: layers, filePath: configPath, store: store, bus: bus, log: log)
        let settings = config.settings
        guard EventLoop.shared.isRunning else {
            log.error("Cannot start the event loop's thread (out of resources?)")
            return .cannotCreate
        }
        let deviceId: String
        do {
            deviceId = try await DeviceIdentity.resolve(store: store)
        } catch {
            log.error("Cannot keep a device id in the store (\(error)); using one for this run only")
            deviceId = DeviceIdentity.randomHex(bytes: 16)
        }
        if !BookkeepingExecutor.shared.priorityLowered {
            log.warning("The bookkeeping thread could not be started at a lower priority (setpriority denied?); "
                        + "tracking and the store compete with the display path as equals")
        }
        let managers = DaemonManagers.assemble(store: store, bus: bus, config: config, deviceId: deviceId, log: log)
        let (tracking, overlays, predict, playback, rooms) =
            (managers.tracking, managers.overlays, managers.predict, managers.playback, managers.rooms)
        await tracking.recoverAfterRestart()
        if settings.insecureTLS {
            log.warning("insecureTLS is on: TLS certificates are not verified (development only)")
        }

        let roles = RolePolicy(daemonUID: geteuid(), privilegedGroup: settings.privilegedGroup)
        if roles.privilegedGID == nil {
            log.warning("Group '\(settings.privilegedGroup)' does not exist: only root and the daemon's user have the control role")
        }

        let listener: UnixListener
        do {
            if let activated = try UnixListener.fromActivation() {
                listener = activated
            } else {
                guard let path = SocketPath.forDaemon(explicit: options.socketPath, environment: environment, isRoot: geteuid() == 0) else {
                    printError("interactived: no socket path: give --socket PATH or set INTERACTIVED_SOCKET or XDG_RUNTIME_DIR")
                    return .usage
                }
                listener = try UnixListener.bind(path: path)
            }
        } catch {
            log.error("Cannot open the local socket: \(error)")
            printErrorIfJournal(log, "interactived: cannot open the local socket: \(error)")
            return .unavailable
        }

        bus.setStatus("daemon", [
            "version": .string(interactivedVersion), "pid": .number(Double(getpid())),
            "startedAt": .string(Timestamp.rfc3339(Timestamp.nowMs())),
            "socket": ["path": JSONValue(listener.path), "activated": .bool(listener.activated)],
            "store": ["path": .string(store.path), "corruptMovedTo": JSONValue(store.corruptMovedTo)],
            "restartNeeded": [], "configError": nil,
        ])
        let notifier = ServiceNotifier()
        let reloader = ConfigReloader(config: config, bus: bus, notifier: notifier)
        let router = RequestRouter(bus: bus, config: config, reloader: reloader, rooms: rooms, overlays: overlays, playback: playback,
                                   voice: managers.voice, version: interactivedVersion, log: log)
        let server = IPCServer(listener: listener, router: router, roles: roles, maxClients: settings.maxClients,
                               subscriberQueueLimit: 1024, log: log)
        let signals: AsyncStream<ProcessSignal>
        do {
            signals = try await SignalStream.make()
        } catch {
            log.error("Cannot start: \(error)")
            printErrorIfJournal(log, "interactived: \(error)")
            listener.close()
            return .unavailable
        }
        let socketDescription = listener.activated ? "socket passed by systemd" : (listener.path ?? "?")
        // The store's health (and its later troubles: a full disk, and their end) reach
        // daemon.status, and through the status board STATUS=.
        bus.setStatus("store", await store.health.json)
        await store.observeHealth { health in await bus.setStatus("store", health.json) }

        // The kept viewer and room come back before any client is served, so that a client's
        // logout or leave cannot be undone by a restore that finishes after it.
        await rooms.restoreFromStore()
        // The services, in the order they start; they stop in reverse order: the room leaves while
        // the local API still serves players and tracking still delivers acks; tracking flushes
        // its store writes last.
        var services: [ServiceGroup.Entry] = [
            .init("tracking", tracking),
            .init("overlays", overlays),
            .init("predict", predict),
            .init("playback", playback),
            .init("local API", FunctionService { shutdown in await shutdown.cancelling { await server.run() } }),
            .init("room", rooms),
            .init("voice", managers.voice),
            .init("memory release", FunctionService { shutdown in await shutdown.cancelling { await MemoryRelease.run() } }),
            .init("store upkeep", FunctionService { shutdown in await shutdown.cancelling { await StoreUpkeep.run(store, log: log) } }),
            .init("signals", FunctionService { shutdown in
                await shutdown.cancelling { await handleSignals(signals, reloader: reloader, notifier: notifier, log: log) }
            }),
        ]
        if let interval = notifier.watchdogInterval() {
            services.append(.init("watchdog", FunctionService { shutdown in
                await shutdown.cancelling { await pingWatchdog(notifier, every: interval / 2) }
            }))
        }
        // STATUS= follows the room, the backend connection and the overlays from here on (the
        // line is not even composed when no service manager listens).
        if notifier.isListening { bus.onStatusLineChange { notifier.status($0) } }
        notifier.ready(status: bus.statusLine)
        log.notice("interactived \(interactivedVersion) ready on \(socketDescription)", ["INTERACTIVE_BOOT_ID": bootId], id: .started)

        // Runs until a stop signal ends the signal service (or another service ends on its own).
        // From the moment the stop begins, the process ends within `shutdownDeadline` whatever
        // a service or the event loop does: SIGALRM's default action kills it (a failed stop).
        let group = ServiceGroup(services, gracePeriod: shutdownGracePeriod) { _ in
            alarm(UInt32(shutdownDeadline.components.seconds))
        }
        let outcome = await group.run(until: ShutdownSignal())
        alarm(0)
        for failure in outcome.failures { log.error("The \(failure.name) service failed: \(failure.error)") }
        if let first = outcome.endedFirst, first != "signals" { log.error("The \(first) service ended on its own; stopping") }
        if !outcome.cancelled.isEmpty {
            log.warning("Graceful stop took longer than \(shutdownGracePeriod); cancelled: \(outcome.cancelled.joined(separator: ", "))")
        }
        // Every write is in: the write-ahead log is emptied into the database (a token forgotten
        // during the run is then in neither file).
        await store.truncateLog()
        listener.close()
        return .ok
    }

    /// Reloads the configuration on SIGHUP; returns on SIGTERM or SIGINT, which stops the group.
    private static func handleSignals(_ signals: AsyncStream<ProcessSignal>, reloader: ConfigReloader,
                                      notifier: ServiceNotifier, log: Logger) async {
        for await signal in signals {
            if signal == .hangup {
                _ = await reloader.reload()
                continue
            }
            notifier.stopping()
            log.notice("Stopping (signal \(signal.rawValue))", id: .stopping)
            return
        }
    }

    /// `--check-config [FILE]`: validates the file (FILE, else the one the daemon would read) and
    /// the flags, touching no socket and no store. 0 when valid, 78 naming the key and the reason.
    static func checkConfiguration(explicitFile: String, options: DaemonOptions, environment: [String: String]) -> DaemonExit {
        let path = explicitFile.isEmpty ? ConfigFile.path(flag: options.configPath, environment: environment) : explicitFile
        let named = !explicitFile.isEmpty || options.configPath != nil
        do {
            if named, !LocalFiles.exists(atPath: path) {
                throw ConfigError.unreadableFile(path: path, reason: "no such file")
            }
            let keys = try ConfigFile.load(path: path)
            _ = try ConfigLayers.validate(options.flagLayer)
            let exists = LocalFiles.exists(atPath: path)
            print(exists ? "\(path): valid (\(keys.count) keys)" : "\(path): no such file; the defaults apply")
            return .ok
        } catch {
            printError("interactived: \(error)")
            return .config
        }
    }

    private static func pingWatchdog(_ notifier: ServiceNotifier, every interval: Duration) async {
        while !Task.isCancelled {
            notifier.watchdog()
            try? await EventLoop.shared.sleep(for: interval)
        }
    }

    /// `$STATE_DIRECTORY`, else `/var/lib/interactived` as root, else `$XDG_STATE_HOME/interactived`,
    /// else `~/.local/state/interactived`.
    static func defaultStateDirectory(_ environment: [String: String]) -> String {
        if let state = environment["STATE_DIRECTORY"], !state.isEmpty {
            return String(state.split(separator: ":").first ?? Substring(state))
        }
        if geteuid() == 0 { return "/var/lib/interactived" }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty { return xdg + "/interactived" }
        let home = environment["HOME"] ?? "/"
        return home + "/.local/state/interactived"
    }

    private static func printError(_ message: String) {
        let line = Array((message + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// Start-up failures also go to stderr when logging to the journal, so a person sees them.
    private static func printErrorIfJournal(_ log: Logger, _ message: String) {
        if log.usesJournal { printError(message) }
    }
}
