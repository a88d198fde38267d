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
    ] as [([String: JSONValue], String)])
    func invalidValuesNameTheKey(_ patch: [String: JSONValue], _ key: String) {
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
}
