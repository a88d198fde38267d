import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveDaemon

/// What interactived.conf(5) is made from, and config.set against a key a flag sets.
@Suite struct ConfigReferenceTests {
    @Test func everyKeyIsDocumented() {
        let keys = ConfigReference.keys
        #expect(keys.map(\.name) == ConfigKeys.all.map(\.name))
        for key in keys { #expect(!key.meaning.isEmpty, "\(key.name) has no meaning in ConfigReference") }
        let byName = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })
        #expect(byName["httpTimeoutMs"]?.defaultText == "10000")
        #expect(byName["socketUrl"]?.flag == "--socket-url")
        #expect(byName["maxClients"]?.runtime == false)
    }

    @Test func configSetOfAKeyAFlagSetsIsRefusedNamingTheFlag() throws {
        var layers = ConfigLayers(defaults: ConfigLayers.defaults(stateDirectory: "/tmp/state"))
        layers.flags = try ConfigLayers.validate(["socketUrl": "ws://127.0.0.1:9/"])
        #expect(throws: ConfigError.overriddenByFlag(key: "socketUrl", flag: "--socket-url")) {
            try layers.patchedRuntime(["socketUrl": "ws://127.0.0.1:10/"])
        }
        // Dropping a runtime value stays possible; keys no flag sets still change.
        #expect(try layers.patchedRuntime(["socketUrl": nil, "tenant": "t"]) == ["tenant": "t"])
        let reply = ConfigError.overriddenByFlag(key: "socketUrl", flag: "--socket-url").rpcError
        #expect(reply.code == RPCErrorCode.invalidParams)
        #expect(reply.data == ["key": "socketUrl", "overriddenBy": "flag", "flag": "--socket-url"])
        #expect(ConfigError.invalid(key: "tenant", reason: "x").rpcError.data == ["key": "tenant"])
    }
}
