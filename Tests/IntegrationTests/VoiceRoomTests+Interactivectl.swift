import Foundation
import JSONValue
import Testing

extension VoiceRoomTests {
    /// interactivectl's voice commands against the real room: join with a pin read from a file
    /// (never shown), status with the participants and who talks, mute on and off, the voice
    /// events in `events`, leave, and the usage and daemon errors' exit statuses.
    @Test func interactivectlDrivesTheVoiceRoom() async throws {
        let pin = "pin-\(Int.random(in: 100_000...999_999))"
        try await withVoiceRoom(friends: ["Ana:\(Self.ana)", "Dana:900:2/2"], pin: pin) { room in
            let pinFile = try TemporaryDirectory()
            let pinPath = pinFile.path + "/pin"
            try Data((pin + "\n").utf8).write(to: URL(fileURLWithPath: pinPath))
            var outputs: [String] = []
            func ctl(_ arguments: [String]) async throws -> CommandResult {
                let result = try await room.daemon.ctl(arguments)
                outputs += [result.stdout, result.stderr]
                return result
            }

            #expect(try await ctl(["voice", "status"]).stdout == "No voice room\n")
            let joined = try await ctl(["voice", "join", room.lab.room, "--pin-file", pinPath, "--display", "Box", "--timeout", "15000"])
            #expect(joined.status == 0, "\(joined.stderr)")
            #expect(joined.stdout.contains("Voice room \(room.lab.room) joined as ") && joined.stdout.contains("with 2 other participants"),
                    "\(joined.stdout)")

            let status = try await ctl(["voice", "status"])
            #expect(status.stdout.contains("\(room.lab.room) joined as") && status.stdout.contains("3 participants"), "\(status.stdout)")
            #expect(status.stdout.contains("Box") && status.stdout.contains("(this box)") && status.stdout.contains("Ana"), "\(status.stdout)")
            let danaTalks = try await eventually(timeoutMs: 15_000, everyMs: 200) {
                try await ctl(["voice", "status"]).stdout.split(separator: "\n").contains { $0.contains("Dana") && $0.contains("talking") }
            }
            #expect(danaTalks, "voice status never showed Dana talking")
            let json = try JSONValue.parse(Array(try await ctl(["voice", "status", "--json"]).stdout.utf8))
            #expect(json["state"] == "joined" && json["participants"]?.arrayValue?.count == 3)
            #expect(try await ctl(["status"]).stdout.contains("Voice"))

            #expect(try await ctl(["voice", "mute", "on"]).stdout == "Voice room \(room.lab.room): microphone muted\n")
            #expect(try await room.status()["muted"] == true)
            #expect(try await ctl(["voice", "mute", "maybe"]).status == 64)
            #expect(try await ctl(["voice", "mute", "off"]).stdout == "Voice room \(room.lab.room): microphone on\n")

            // A participant already talking when the box joins is in the join's state, not in an
            // event: `voice.talking` comes with Dana's next change (she talks 2 s in 4).
            var events = try await ctl(["events", "--type", "voice."])
            #expect(events.stdout.contains("voice.state") && events.stdout.contains("\(room.lab.room) joined as"), "\(events.stdout)")
            let talkingEvent = try await eventually(timeoutMs: 15_000, everyMs: 250) {
                events = try await ctl(["events", "--type", "voice."])
                return events.stdout.contains("voice.talking")
            }
            #expect(talkingEvent, "\(events.stdout)")

            #expect(try await ctl(["voice", "join", String(repeating: "r", count: 65)]).status == 64)
            #expect(try await ctl(["voice", "leave"]).stdout == "Left voice room \(room.lab.room)\n")
            #expect(try await ctl(["voice", "leave"]).status == 1)
            #expect(!outputs.joined().contains(pin) && !room.daemon.stderr.contains(pin))
        }
    }
}
