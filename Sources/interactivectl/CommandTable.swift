/// Every command, in the order help lists them. A new command file adds its commands here with
/// one line; help, the man page and the completions follow from this table.
enum CommandTable {
    static let commands: [Command] = [
        CoreCommands.all,
        RoomCommands.all,
        PlayerCommands.all,
        PlaybackCommands.all,
        VoiceCommands.all,
        [ReloadCommand.reload],
        [CompletionCommand.completion],
    ].flatMap { $0 }

    /// What the first word of a multi-word command stands for, for the group's help.
    static let groupSummaries: [String: String] = [
        "config": "Read and change the daemon's configuration.",
        "overlay": "Act as the player on an overlay that is on screen.",
        "predict": "Act as the viewer on a predict or lucky button.",
        "voice": "Talk with friends in a voice room while watching.",
    ]

    /// The commands whose first word is `word`, when it names a group (e.g. config get, config set).
    static func group(_ word: String) -> [Command] {
        let members = commands.filter { $0.words.count > 1 && $0.words.first == word }
        return members
    }

    /// The command that `words` start with (the longest match).
    static func command(for words: [String]) -> Command? {
        commands.filter { words.starts(with: $0.words) }.max { $0.words.count < $1.words.count }
    }

    /// The options that take a value, over every command and the global ones.
    static var valueOptions: Set<String> {
        Set((GlobalOptions.all + commands.flatMap(\.options)).filter { $0.value != nil }.map(\.name))
    }

    /// Short letters and the long option each stands for.
    static var shortOptions: [Character: String] {
        var letters: [Character: String] = [:]
        for option in GlobalOptions.all + commands.flatMap(\.options) {
            if let short = option.short { letters[short] = option.name }
        }
        return letters
    }
}
