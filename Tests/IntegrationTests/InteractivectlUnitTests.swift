import Testing
@testable import interactivectl

/// interactivectl's pure parts: wrapping, event times, argument splitting.
@Suite struct InteractivectlUnitTests {
    @Test func wrapKeepsEveryWordAndCutsNone() async {
        let text = "one two three {\"type\":\"INTERACTIVE_ACTION_REPORT\"} four"
        let lines = Help.wrap(text, width: 10)
        #expect(lines == ["one two", "three", "{\"type\":\"INTERACTIVE_ACTION_REPORT\"}", "four"])
        #expect(Help.wrap("a\nb", width: 80) == ["a", "b"])
    }

    @Test func eventTimesParseStrictly() async {
        #expect(EventTime.parse("1970-01-01T00:00:01.5Z")?.0 == 1)
        #expect(EventTime.parse("1970-01-01T00:00:01.5Z")?.1 == 500)
        #expect(EventTime.parse("2026-11-29T14:03:19.696Z")?.1 == 696)
        #expect(EventTime.parse("2026-11-29T14:03:19Z")?.1 == 0)
        #expect(EventTime.parse("2026-13-29T14:03:19Z") == nil)
        #expect(EventTime.parse("2026-11-29 14:03:19Z") == nil)
        #expect(EventTime.local("not a time") == "not a time")
    }

    @Test func argumentsSplitOptionsFlagsAndShortLetters() async throws {
        let arguments = try Arguments(["events", "-fj", "--type", "overlay.", "--since=3", "--", "-x"],
                                      valueOptions: ["--type", "--since"], shortOptions: ["f": "--follow", "j": "--json"])
        #expect(arguments.positional == ["events", "-x"])
        #expect(arguments.flag("--follow") && arguments.flag("--json"))
        #expect(arguments.values("--type") == ["overlay."])
        #expect(arguments.value("--since") == "3")
        #expect(throws: UsageError.self) { try Arguments(["--type"], valueOptions: ["--type"], shortOptions: [:]) }
        #expect(throws: UsageError.self) { try Arguments(["-q"], valueOptions: [], shortOptions: [:]) }
    }

    @Test func firstFormCommandsKeepTheirUsage() async {
        let command = Command(words: ["playback", "start"], usage: "playback start FILM EPISODE --union-info X [--timeout MS] [--origin] [--json]",
                              summary: "s", details: "", options: ["--union-info", "--timeout", "--origin"]) { _ throws(CommandFailure) in }
        #expect(command.synopsis == "playback start --union-info X FILM EPISODE [--timeout MS] [--origin] [--json]")
        #expect(command.options.first { $0.name == "--union-info" }?.required == true)
        #expect(command.options.first { $0.name == "--origin" }?.value == nil)
    }
}
