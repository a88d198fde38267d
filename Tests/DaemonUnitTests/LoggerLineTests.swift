import Testing
@testable import InteractiveDaemon

/// The readable line the daemon writes to stderr when it does not log to the journal.
@Suite struct LoggerLineTests {
    @Test func aLineHasTheTimePriorityMessageAndFieldsInOrder() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let log = Logger(target: .stderr, environment: [:])
            log.info("Overlay ov-1 shown", ["INTERACTIVE_OVERLAY_ID": "ov-1", "INTERACTIVE_MEDIA_ID": "m 1", "CODE_LINE": "7"])
            log.debug("not written: below the minimum priority")
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "one line, ended by a newline: \(text)")
        // 2026-11-30T17:49:18.123Z (24 characters), then the rest.
        // The fields in the order given.
        #expect(lines[0].dropFirst(24) == #" info Overlay ov-1 shown overlay_id=ov-1 media_id="m 1" code_line=7"#)
        #expect(lines[0].first?.isNumber == true && lines[0].dropFirst(23).first == "Z")
    }

    @Test func fieldNamesLoseOurPrefixAndAreLowerCase() {
        for (key, expected) in [("INTERACTIVE_OVERLAY_ID", "overlay_id"), ("MESSAGE_ID", "message_id"), ("INTERACTIVE_", ""),
                                ("CODE_FILE2", "code_file2")] {
            var line: [UInt8] = []
            Logger.appendFieldName(key, to: &line)
            #expect(String(decoding: line, as: UTF8.self) == expected)
        }
    }
}
