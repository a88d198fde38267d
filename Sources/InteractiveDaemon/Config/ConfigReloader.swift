/// Reloads the configuration file the way the service manager expects it: `RELOADING=1` with
/// `MONOTONIC_USEC`, the file applied or refused, then `READY=1` with the status line. SIGHUP and
/// `daemon.reload` (the unit's `ExecReload=`) both go through it.
struct ConfigReloader: Sendable {
    let config: ConfigStore
    let bus: EventBus
    let notifier: ServiceNotifier

    func reload() async -> Result<ConfigReload, ConfigError> {
        notifier.reloading()
        let outcome = await config.reloadFile()
        notifier.ready(status: await bus.statusLine)
        return outcome
    }
}
