import JSONValue
import Testing
@testable import SocketIO

@Suite struct EndpointTests {
    @Test func schemesPortsAndPaths() throws {
        let a = try Endpoint(parsing: "wss://wsk.onplay.live")
        #expect(a == Endpoint(secure: true, host: "wsk.onplay.live", port: 443, path: "/", query: nil))
        #expect(a.hostHeader == "wsk.onplay.live")
        let b = try Endpoint(parsing: "http://127.0.0.1:8080/socket.io/?x=1#frag")
        #expect(b == Endpoint(secure: false, host: "127.0.0.1", port: 8080, path: "/socket.io/", query: "x=1"))
        #expect(b.hostHeader == "127.0.0.1:8080")
        #expect(b.hostIsIPLiteral)
        let c = try Endpoint(parsing: "WS://[::1]:9000")
        #expect(c.host == "::1")
        #expect(c.hostHeader == "[::1]:9000")
        #expect(c.hostIsIPLiteral)
        #expect(try !Endpoint(parsing: "https://localhost").hostIsIPLiteral)
        #expect(try Endpoint(parsing: "https://h:443").hostHeader == "h")
    }

    @Test(arguments: ["ftp://x", "ws://", "ws://:80", "ws://h:0", "ws://h:70000", "ws://u@h", "ws://[::1", "nohost"])
    func invalidURLs(url: String) {
        #expect(throws: SocketIOError.invalidURL(url)) { try Endpoint(parsing: url) }
    }
}

@Suite struct EngineIOCodecTests {
    @Test func textPackets() throws {
        #expect(try EngineIOCodec.decode(opcode: .text, payload: Array("2".utf8), version: .v4) == .ping([]))
        #expect(try EngineIOCodec.decode(opcode: .text, payload: Array("3probe".utf8), version: .v4) == .pong(Array("probe".utf8)))
        #expect(try EngineIOCodec.decode(opcode: .text, payload: Array("42[\"a\"]".utf8), version: .v4) == .message(Array("2[\"a\"]".utf8)))
        #expect(try EngineIOCodec.decode(opcode: .text, payload: Array("1".utf8), version: .v4) == .close)
        #expect(try EngineIOCodec.decode(opcode: .text, payload: Array("6".utf8), version: .v3) == .noop)
        #expect(throws: SocketIOError.self) { try EngineIOCodec.decode(opcode: .text, payload: Array("9".utf8), version: .v4) }
        #expect(throws: SocketIOError.self) { try EngineIOCodec.decode(opcode: .text, payload: [], version: .v4) }
        #expect(EngineIOCodec.encode(.pong([]), version: .v4).1 == Array("3".utf8))
        #expect(EngineIOCodec.encode(.message(Array("0{}".utf8)), version: .v4).1 == Array("40{}".utf8))
    }

    @Test func binaryPacketsPerVersion() throws {
        #expect(try EngineIOCodec.decode(opcode: .binary, payload: [1, 2], version: .v4) == .binary([1, 2]))
        #expect(try EngineIOCodec.decode(opcode: .binary, payload: [4, 1, 2], version: .v3) == .binary([1, 2]))
        #expect(throws: SocketIOError.self) { try EngineIOCodec.decode(opcode: .binary, payload: [2, 1], version: .v3) }
        #expect(EngineIOCodec.encode(.binary([9]), version: .v4) == (.binary, [9]))
        #expect(EngineIOCodec.encode(.binary([9]), version: .v3) == (.binary, [4, 9]))
    }

    @Test func handshake() throws {
        let h = try EngineIOHandshake(json: Array(#"{"sid":"abc","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#.utf8))
        #expect(h == EngineIOHandshake(sid: "abc", pingInterval: .seconds(25), pingTimeout: .seconds(20), maxPayload: 1_000_000))
        let v3 = try EngineIOHandshake(json: Array(#"{"sid":"x","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":5000}"#.utf8))
        #expect(v3.maxPayload == nil)
        #expect(throws: SocketIOError.self) { try EngineIOHandshake(json: Array(#"{"pingInterval":1,"pingTimeout":1}"#.utf8)) }
        #expect(throws: SocketIOError.self) { try EngineIOHandshake(json: Array("not json".utf8)) }
    }
}

@Suite struct SocketIOCodecTests {
    func encode(_ packet: SocketIOPacket) -> String { String(decoding: SocketIOCodec.encode(packet), as: UTF8.self) }
    func decode(_ text: String) throws -> SocketIOPacket { try SocketIOCodec.decode(Array(text.utf8)) }

    @Test func encoding() {
        #expect(encode(SocketIOPacket(type: .connect, data: ["token": "t"])) == #"0{"token":"t"}"#)
        #expect(encode(SocketIOPacket(type: .connect, namespace: "/admin")) == "0/admin,")
        #expect(encode(SocketIOPacket(type: .event, id: 12, data: ["hello", 1])) == #"212["hello",1]"#)
        #expect(encode(SocketIOPacket(type: .ack, namespace: "/admin", id: 3, data: ["ok"])) == #"3/admin,3["ok"]"#)
        var binary = SocketIOPacket(type: .binaryEvent, data: ["up", SocketIOBinary.placeholder(0)])
        binary.attachmentCount = 1
        #expect(encode(binary) == #"51-["up",{"_placeholder":true,"num":0}]"#)
        #expect(encode(SocketIOPacket(type: .disconnect)) == "1")
    }

    @Test func decoding() throws {
        #expect(try decode(#"0{"sid":"s1"}"#) == SocketIOPacket(type: .connect, data: ["sid": "s1"]))
        #expect(try decode("0/admin,") == SocketIOPacket(type: .connect, namespace: "/admin"))
        let event = try decode(#"2/admin,7["ev", {"a": [1,2]} ]"#)
        #expect(SocketIOPacket(type: .event, namespace: "/admin", id: 7, data: event.data) == SocketIOPacket(type: .event, namespace: "/admin", id: 7, data: ["ev", ["a": [1, 2]]]))
        // Where the array's parts lie, for a reader that relays them as they came.
        let text = try #require(event.dataText)
        #expect(text.element(0).map { String(decoding: $0, as: UTF8.self) } == #""ev""#)
        #expect(text.element(1).map { String(decoding: $0, as: UTF8.self) } == #"{"a": [1,2]}"#)
        #expect(text.element(1, member: "a").map { String(decoding: $0, as: UTF8.self) } == "[1,2]")
        #expect(text.element(1, member: "b") == nil && text.element(0, member: "a") == nil && text.element(2) == nil)
        #expect(try decode(#"31["x"]"#).dataText == nil)
        #expect(try decode(#"31["x"]"#) == SocketIOPacket(type: .ack, id: 1, data: ["x"]))
        #expect(try decode(#"4{"message":"no","data":{"code":1}}"#).data?["message"] == "no")
        #expect(try decode(#"4"Unable to connect""#).data == "Unable to connect")
        #expect(try decode(#"4/nope,"Unable to connect""#).namespace == "/nope")
        let binary = try decode(#"62-/admin,5[{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        #expect(binary.type == .binaryAck)
        #expect(binary.attachmentCount == 2)
        #expect(binary.namespace == "/admin")
        #expect(binary.id == 5)
        #expect(try decode("0/chat?token=1,").namespace == "/chat")
    }

    @Test func refusalForms() {
        #expect(SocketIOConnectionMachine.refusal(["message": "bad token", "data": ["code": "E401"]])
                == .connectionRefused(message: "bad token", data: ["code": "E401"]))
        #expect(SocketIOConnectionMachine.refusal("Unable to connect") == .connectionRefused(message: "Unable to connect", data: nil))
        #expect(SocketIOConnectionMachine.refusal(nil) == .connectionRefused(message: "refused", data: nil))
    }

    @Test(arguments: ["", "9", "x", #"2["#, #"2{"a":1}"#, "2[1]", "3[]", "5[\"a\"]", "51001-[\"a\"]", "2999999999999999999[\"a\"]"])
    func malformedPacketsAreErrors(text: String) {
        #expect(throws: SocketIOError.self) { try decode(text) }
    }

    @Test func binaryAssembler() throws {
        var assembler = SocketIOBinaryAssembler()
        var packet = SocketIOPacket(type: .binaryEvent, data: ["e", SocketIOBinary.placeholder(0), SocketIOBinary.placeholder(1)])
        packet.attachmentCount = 2
        #expect(try assembler.start(packet) == nil)
        #expect(try assembler.add([1]) == nil)
        let complete = try #require(try assembler.add([2, 3]))
        #expect(complete.1 == [[1], [2, 3]])
        #expect(throws: SocketIOError.self) { try assembler.add([4]) }
        #expect(try assembler.start(SocketIOPacket(type: .event, data: ["plain"])) != nil)
        let payload = SocketIOPayload(args: Array(packet.data?.arrayValue?.dropFirst() ?? []), attachments: complete.1)
        #expect(payload.binary(payload.args[1]) == [2, 3])
        #expect(payload.binary("text") == nil)
    }
}

@Suite struct WebSocketCodecTests {
    @Test func lengthsAndPartialInput() throws {
        var decoder = WebSocketFrameDecoder(maxPayload: 1 << 20)
        let big = [UInt8](repeating: 7, count: 70_000)
        let bytes = FakeServer.frame(0x81, Array("hi".utf8)) + FakeServer.frame(0x82, [UInt8](repeating: 1, count: 300)) + FakeServer.frame(0x02, big)
        for chunk in stride(from: 0, to: bytes.count, by: 1000) { decoder.append(bytes[chunk..<min(chunk + 1000, bytes.count)]) }
        #expect(try decoder.next() == WebSocketFrame(fin: true, opcode: .text, payload: Array("hi".utf8)))
        #expect(try decoder.next()?.payload.count == 300)
        let last = try #require(try decoder.next())
        #expect(last == WebSocketFrame(fin: false, opcode: .binary, payload: big))
        #expect(try decoder.next() == nil)
        decoder.append([0x81])
        #expect(try decoder.next() == nil)
    }

    static let violations: [([UInt8], UInt16, Int)] = [
        (FakeServer.frame(0xC1, [1]), 1002, 1 << 20),  // RSV1
        (FakeServer.frame(0x83, [1]), 1002, 1 << 20),  // opcode 3
        (FakeServer.frame(0x8B, [1]), 1002, 1 << 20),  // opcode 0xB
        ([0x81, 0x81, 1, 2, 3, 4, 5], 1002, 1 << 20),  // masked by the server
        (FakeServer.frame(0x09, [1]), 1002, 1 << 20),  // fragmented ping
        (FakeServer.frame(0x89, [UInt8](repeating: 0, count: 126)), 1002, 1 << 20),  // long ping
        (FakeServer.frame(0x82, [UInt8](repeating: 0, count: 2000)), 1009, 1000),
        ([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1], 1002, 1 << 20),  // 64-bit length, high bit
    ]

    @Test(arguments: violations)
    func violationsCarryTheirCloseCode(bytes: [UInt8], code: UInt16, maxPayload: Int) {
        var decoder = WebSocketFrameDecoder(maxPayload: maxPayload)
        decoder.append(bytes)
        #expect { try decoder.next() } throws: { ($0 as? WebSocketProtocolError)?.code == code }
    }

    @Test func clientFramesAreMasked() throws {
        let payload = Array((0..<300).map { UInt8($0 & 0xFF) })
        var out: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, mask: 0x0102_0304, into: &out)
        #expect(Array(out[0..<4]) == [0x82, 0x80 | 126, 0x01, 0x2C])
        #expect(Array(out[4..<8]) == [1, 2, 3, 4])
        let unmasked = out[8...].enumerated().map { $0.element ^ [1, 2, 3, 4][$0.offset & 3] }
        #expect(unmasked == payload)
        var long: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .text, payload: [UInt8](repeating: 65, count: 70_000), mask: 0, into: &long)
        #expect(Array(long[0..<10]) == [0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    @Test func handshakeHelpers() throws {
        #expect(Encoding.webSocketAccept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Encoding.base64(Encoding.sha1([])) == "2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
        #expect(Encoding.base64(Encoding.sha1(Array(String(repeating: "a", count: 1000).utf8))) == "KR6abGaZSUm1e6XmUDYemPw2sbo=")
        #expect(Encoding.base64([]) == "")
        #expect(Encoding.base64(Array("f".utf8)) == "Zg==")
        #expect(Encoding.base64(Array("fo".utf8)) == "Zm8=")
        #expect(Encoding.base64(Array("foobar".utf8)) == "Zm9vYmFy")
        let response = try Handshake.parseResponse(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".utf8))
        #expect(throws: Never.self) { try Handshake.validate(response, key: "dGhlIHNhbXBsZSBub25jZQ==") }
        #expect(throws: SocketIOError.self) { try Handshake.validate(response, key: "AAAAAAAAAAAAAAAAAAAAAA==") }
        #expect(!Handshake.isToken("Bad Header"))
        #expect(Handshake.isToken("x-tenant-id"))
    }

    @Test func utf8Validation() {
        #expect(Encoding.isValidUTF8(Array("héllo ✓ 😀".utf8)))
        #expect(!Encoding.isValidUTF8([0xFF]))
        #expect(!Encoding.isValidUTF8([0xC0, 0xAF]))  // overlong
        #expect(!Encoding.isValidUTF8([0xED, 0xA0, 0x80]))  // surrogate
        #expect(!Encoding.isValidUTF8([0xF4, 0x90, 0x80, 0x80]))  // above U+10FFFF
        #expect(!Encoding.isValidUTF8([0xE2, 0x82]))  // truncated
    }

    @Test func closePayloadKeepsUTF8Whole() {
        let payload = Handshake.closePayload(code: 1000, reason: String(repeating: "é", count: 100))
        #expect(payload.count <= 125)
        #expect(Encoding.isValidUTF8(payload[2...]))
    }
}

@Suite struct BackoffTests {
    typealias Instant = ContinuousClock.Instant

    @Test func ceilingsGrowToTheCap() {
        let backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 500, capMs: 30_000, factor: 2))
        #expect((0..<9).map { backoff.ceilingMs(afterFailures: $0) } == [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
        #expect(backoff.ceilingMs(afterFailures: 10_000) == 30_000)
    }

    @Test func fullJitterWithInjectedRandomSource() {
        var backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 1000, factor: 3))
        var random = SplitMix64(seed: 42)
        var again = SplitMix64(seed: 42)
        var delays: [Duration] = []
        for attempt in 0..<6 {
            let delay = backoff.nextDelay(using: &random)
            #expect(delay >= .zero)
            #expect(delay <= .milliseconds(backoff.ceilingMs(afterFailures: attempt)))
            delays.append(delay)
        }
        var replay = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 1000, factor: 3))
        #expect((0..<6).map { _ in replay.nextDelay(using: &again) } == delays)
        #expect(Set(delays).count > 3, "jitter spreads the delays")
    }

    @Test func resetOnlyAfterAStableConnection() {
        var backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 10_000, factor: 2, stableAfterMs: 5000))
        var random = SplitMix64(seed: 1)
        let t0 = Instant.now
        for _ in 0..<4 { _ = backoff.nextDelay(using: &random) }
        #expect(backoff.failures == 4)
        backoff.connected(at: t0)
        backoff.disconnected(at: t0 + .seconds(2))  // flapping: no reset
        #expect(backoff.failures == 4)
        backoff.connected(at: t0 + .seconds(3))
        backoff.disconnected(at: t0 + .seconds(9))  // lasted 6 s: stable
        #expect(backoff.failures == 0)
        #expect(backoff.nextDelay(using: &random) <= .milliseconds(100))
    }
}
