import Testing
@testable import interactived_voice

@Suite struct ICEServersTests {
    @Test func stunAndTurnURLsTakeWebrtcbinsForms() {
        let servers = ICEServers(urls: ["stun:stun.example.net:3478", "turn:user:secret@turn.example.net:3478?transport=udp",
                                        "turns://u:p@turn.example.net:5349"])
        #expect(servers.stun == "stun://stun.example.net:3478")
        #expect(servers.turn == ["turn://user:secret@turn.example.net:3478", "turns://u:p@turn.example.net:5349"])
        #expect(servers.rejectedCount == 0)
    }

    @Test func oneStunServerAndOnlyKnownSchemes() {
        let servers = ICEServers(urls: ["stun://a:1", "stun:b:2", "http://c", "turn:", "STUN:d"])
        #expect(servers.stun == "stun://a:1")
        #expect(servers.turn.isEmpty)
        #expect(servers.rejectedCount == 4)
    }

    @Test func theDescriptionShowsNoCredentials() {
        let servers = ICEServers(urls: ["turn:user:secret@turn.example.net:3478"])
        #expect(!servers.description.contains("secret"))
        #expect(servers.description == "0 STUN, 1 TURN server(s)")
    }

    @Test func noURLsMeansHostCandidatesOnly() {
        #expect(ICEServers(urls: []).stun == nil)
    }
}
