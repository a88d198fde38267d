import IPCProtocol

/// `interactivectl reload`: what the unit's `ExecReload=` runs. It returns once the daemon has
/// applied the configuration file or refused it; a refused file exits 1 with the daemon's message,
/// which names the key, so `systemctl reload interactived` fails with it.
enum ReloadCommand {
    static let reload = Command(
        words: ["reload"], usage: "reload [--json]",
        summary: "Make the daemon re-read its configuration file, and wait until it is applied or refused.",
        details: """
            A refused file leaves the running configuration in force: exit status 1, and the message
            names the key and the reason. Start-only keys (stateDirectory, maxClients, privilegedGroup,
            logTarget) changed in the file apply at the next restart; they are listed.
            """,
        options: []
    ) { context throws(CommandFailure) in
        let result = try context.connect().call(DaemonReloadParams())
        if context.output.json { return context.output.emit(result.json) }
        let changed = result.changed
        context.output.line("Reloaded \(result.file): "
                            + (changed.isEmpty ? "nothing changed" : "changed \(changed.joined(separator: ", "))"))
        let restart = result.restartNeeded
        if !restart.isEmpty {
            context.output.line(context.output.yellow("Restart needed to apply \(restart.joined(separator: ", ")) (start-only keys)"))
        }
    }
}
