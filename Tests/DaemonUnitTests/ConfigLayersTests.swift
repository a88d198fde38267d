import JSONValue
import Testing
@testable import InteractiveDaemon

@Suite struct ConfigLayersTests {
    private var layers: ConfigLayers { ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: "/tmp/state")) }

    @Test func precedenceIsDefaultsFileRuntimeFlags() throws {
        var layers = self.layers
        layers.file = try ConfigLayers.validate(["tenant": "file", "os": "file", "httpTimeoutMs": 2000])
        layers.runtime = try layers.patchedRuntime(["tenant": "runtime", "os": "runtime"])
        layers.flags = try ConfigLayers.validate(["os": "flag"])
        let effective = layers.effective
        #expect(effective["tenant"] == "runtime")
        #expect(effective["os"] == "flag")
        #expect(effective["httpTimeoutMs"] == 2000)
        #expect(effective["deviceClass"] == "settopbox")
        #expect(effective["leaderboardUrl"] == .null)
    }

    @Test func prodSuppliesTheURLsAndOthersDoNot() throws {
        var layers = self.layers
        layers.file = try ConfigLayers.validate(["environment": "prod"])
        #expect(layers.effective["socketUrl"] == "wss://wsk.onplay.live")
        #expect(layers.effective["apiUrl"] == "https://api.onplay.live")
        layers.file = try ConfigLayers.validate(["environment": "stg"])
        #expect(layers.effective["socketUrl"] == .null)
        #expect(Settings(layers.effective).missingForLive == ["tenant", "os", "socketUrl", "apiUrl"])
    }

    @Test func patchesMergeObjectsAndNullDropsAnOverride() throws {
        var layers = self.layers
        layers.runtime = try layers.patchedRuntime(["reconnect": ["capMs": 9000]])
        #expect(layers.effective["reconnect"] == ["baseMs": 500, "capMs": 9000, "factor": 2])
        layers.runtime = try layers.patchedRuntime(["reconnect": nil])
        #expect(layers.effective["reconnect"] == ["baseMs": 500, "capMs": 30000, "factor": 2])
    }

    @Test(arguments: [
        (["tenent": "x"], "tenent"), (["httpTimeoutMs": "soon"], "httpTimeoutMs"), (["socketUrl": "ftp://x"], "socketUrl"),
        (["reconnect": ["baseMs": 100, "capMs": 50]], "reconnect"), (["viewport": ["width": 0, "height": 10]], "viewport.width"),
        (["environment": "moon"], "environment"), (["tenant": "a\nb"], "tenant"),
    ] as [(JSONObject, String)])
    func invalidValuesNameTheKey(_ patch: JSONObject, _ key: String) {
        #expect(throws: ConfigError.self) { try layers.patchedRuntime(patch) }
        do {
            _ = try layers.patchedRuntime(patch)
        } catch {
            #expect(error.key == key)
        }
    }

    @Test func startOnlyKeysAreRefusedAtRuntime() {
        #expect(throws: ConfigError.startOnly("maxClients")) { try layers.patchedRuntime(["maxClients": 3]) }
    }

    @Test func originsNameTheLayerOfEachValue() throws {
        var layers = self.layers
        layers.file = try ConfigLayers.validate(["tenant": "file", "os": "file", "environment": "prod"])
        layers.runtime = try layers.patchedRuntime(["os": "runtime", "reconnect": ["capMs": 9000]])
        layers.flags = try ConfigLayers.validate(["apiUrl": "https://flag.example"])
        let origins = layers.origins
        #expect(origins["tenant"]?.origin == .file)
        #expect(origins["os"]?.origin == .runtime)
        #expect(origins["os"]?.value == "runtime")
        #expect(origins["apiUrl"]?.origin == .flag)
        #expect(origins["socketUrl"]?.origin == .default)
        #expect(origins["socketUrl"]?.value == "wss://wsk.onplay.live")
        #expect(origins["httpTimeoutMs"]?.origin == .default)
        #expect(origins["caFile"]?.origin == .unset)
        #expect(origins["caFile"]?.value == .null)
        // An object merged over lower layers comes from the top one that set a member.
        #expect(origins["reconnect"]?.origin == .runtime)
        #expect(origins["reconnect"]?.value == ["baseMs": 500, "capMs": 9000, "factor": 2])
    }

    @Test func startOnlyKeysKeepTheirValueFromStartUntilARestart() throws {
        var layers = self.layers
        layers.file = try ConfigLayers.validate(["tenant": "first", "maxClients": 10, "privilegedGroup": "players"])
        layers.fileAtStart = layers.file
        layers.file = try ConfigLayers.validate(["tenant": "second", "maxClients": 20])
        #expect(layers.effective["tenant"] == "second")
        #expect(layers.effective["maxClients"] == 10)
        #expect(layers.effective["privilegedGroup"] == "players")
        #expect(layers.origins["maxClients"]?.origin == .file)
        let pending = layers.restartNeeded
        #expect(pending.map(\.key) == ["maxClients", "privilegedGroup"])
        #expect(pending.first?.requested == 20)
        // The group dropped from the file means the default after a restart.
        #expect(pending.last?.requested == "interactive")
        // Back to the values of the start: nothing pending.
        layers.file = try ConfigLayers.validate(["tenant": "third", "maxClients": 10, "privilegedGroup": "players"])
        #expect(layers.restartNeeded.isEmpty)
    }

    @Test func aFlagOverAStartOnlyKeyNeedsNoRestartWhenTheFileChangesIt() throws {
        var layers = self.layers
        layers.flags = try ConfigLayers.validate(["logTarget": "stderr"])
        layers.fileAtStart = [:]
        layers.file = try ConfigLayers.validate(["logTarget": "journal"])
        #expect(layers.effective["logTarget"] == "stderr")
        #expect(layers.restartNeeded.isEmpty)
    }
}
