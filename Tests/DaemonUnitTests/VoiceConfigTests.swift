import IPCProtocol
import JSONValue
import SocketIO
import Testing
@testable import InteractiveDaemon

/// The voice configuration keys (IPC.md, Voice rooms: configuration): their values, which are
/// runtime, and the secrets shown as `"(set)"`.
@Suite struct VoiceConfigTests {
    static func layers(file: JSONObject = [:]) throws -> ConfigLayers {
        var layers = ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: "/tmp/state"))
        layers.file = try ConfigLayers.validate(file)
        return layers
    }

    @Test func theDefaults() throws {
        let settings = Settings(try Self.layers().effective)
        #expect(settings.voiceURL == nil && settings.voiceAPISecret == nil && settings.voiceToken == nil)
        #expect(settings.voiceCreateRooms && settings.voiceEchoCancel)
        #expect(settings.voiceSource == "autoaudiosrc" && settings.voiceSink == "autoaudiosink" && settings.voiceICE.isEmpty)
        let voice = VoiceSettings(settings)
        #expect(voice.missing == ["voiceUrl"])
        // The backend's backoff (`reconnect`).
        #expect(voice.reconnect == ReconnectPolicy(baseMs: 500, capMs: 30_000, factor: 2))
    }

    @Test func aConfiguredVoice() throws {
        let settings = Settings(try Self.layers(file: [
            "voiceUrl": "wss://voice.example/janus", "voiceApiSecret": "s", "voiceToken": "t", "voiceCreateRooms": false,
            "voiceSource": "audiotestsrc wave=sine freq=440 is-live=true", "voiceSink": "fakesink", "voiceEchoCancel": false,
            "voiceIce": ["stun:stun.example:3478", "turns:user:pw@turn.example:5349?transport=tcp"],
        ]).effective)
        let voice = VoiceSettings(settings)
        #expect(voice.url == "wss://voice.example/janus" && voice.missing.isEmpty)
        #expect(voice.credentials == JanusCredentials(apiSecret: "s", token: "t"))
        #expect(!voice.createRooms && !voice.echoCancel && voice.sink == "fakesink")
        #expect(voice.source == "audiotestsrc wave=sine freq=440 is-live=true")
        #expect(voice.ice == ["stun:stun.example:3478", "turns:user:pw@turn.example:5349?transport=tcp"])
    }

    @Test(arguments: [
        ("voiceUrl", "http://voice.example/"), ("voiceUrl", "ws://"), ("voiceUrl", 5),
        ("voiceApiSecret", ""), ("voiceToken", "a\nb"), ("voiceCreateRooms", "yes"), ("voiceSource", ""),
        ("voiceEchoCancel", 1), ("voiceIce", "stun:x"), ("voiceIce", ["http://x"]), ("voiceIce", ["stun:"]),
        ("voiceIce", ["stun:a b"]), ("voiceIce", [5]), ("voiceIce", JSONValue.array(Array(repeating: "stun:x", count: 17))),
    ] as [(String, JSONValue)])
    func badValuesAreRefusedNamingTheKey(_ key: String, _ value: JSONValue) {
        #expect(throws: ConfigError.self) { try ConfigLayers.validate([key: value]) }
        do {
            _ = try ConfigLayers.validate([key: value])
        } catch {
            #expect(error.key == key)
        }
    }

    @Test func pipelinesAndEchoCancellationAreNeverSetAtRuntime() throws {
        let layers = try Self.layers()
        for key in ["voiceSource", "voiceSink", "voiceEchoCancel"] {
            #expect(throws: ConfigError.startOnly(key)) { try layers.patchedRuntime([key: key == "voiceEchoCancel" ? false : "fakesink"]) }
        }
        let runtime = try layers.patchedRuntime(["voiceUrl": "ws://127.0.0.1:8188", "voiceApiSecret": "s", "voiceToken": "t",
                                                 "voiceCreateRooms": false, "voiceIce": ["stun:127.0.0.1:3478"]])
        #expect(runtime.count == 5)
    }

    @Test func secretsAreShownAsSet() throws {
        var layers = try Self.layers(file: ["voiceUrl": "ws://127.0.0.1:8188", "voiceApiSecret": "api-SECRET"])
        #expect(ConfigKeys.shown(layers.effective)["voiceIce"] == [], "no ICE servers: nothing to hide")
        layers.runtime = try layers.patchedRuntime(["voiceToken": "tok-SECRET", "voiceIce": ["turn:user:pw-SECRET@turn.example:3478"]])
        let shown = ConfigKeys.shown(layers.effective)
        #expect(shown["voiceApiSecret"] == "(set)")
        #expect(shown["voiceToken"] == "(set)")
        #expect(shown["voiceIce"] == "(set)", "TURN URLs carry credentials")
        #expect(shown["voiceUrl"] == "ws://127.0.0.1:8188")
        #expect(!JSONValue.object(shown).jsonText.contains("SECRET"))
        // Unset stays null; the values themselves stay for the daemon.
        #expect(ConfigKeys.shown(try Self.layers().effective)["voiceApiSecret"] == .null)
        #expect(Settings(layers.effective).voiceToken == "tok-SECRET")
        #expect(ConfigKeys.all.filter(\.secret).map(\.name) == ["voiceApiSecret", "voiceToken", "voiceIce"])
    }
}
