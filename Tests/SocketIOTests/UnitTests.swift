import JSONValue
import XCTest
@testable import SocketIO

final class EndpointTests: XCTestCase {
    func testSchemesPortsAndPaths() throws {
        let a = try Endpoint(parsing: "wss://wsk.onplay.live")
        XCTAssertEqual(a, Endpoint(secure: true, host: "wsk.onplay.live", port: 443, path: "/", query: nil))
        XCTAssertEqual(a.hostHeader, "wsk.onplay.live")
        let b = try Endpoint(parsing: "http://127.0.0.1:8080/socket.io/?x=1#frag")
        XCTAssertEqual(b, Endpoint(secure: false, host: "127.0.0.1", port: 8080, path: "/socket.io/", query: "x=1"))
        XCTAssertEqual(b.hostHeader, "127.0.0.1:8080")
        XCTAssertTrue(b.hostIsIPLiteral)
        let c = try Endpoint(parsing: "WS://[::1]:9000")
        XCTAssertEqual(c.host, "::1")
        XCTAssertEqual(c.hostHeader, "[::1]:9000")
        XCTAssertTrue(c.hostIsIPLiteral)
        XCTAssertFalse(try Endpoint(parsing: "https://localhost").hostIsIPLiteral)
        XCTAssertEqual(try Endpoint(parsing: "https://h:443").hostHeader, "h")
    }

    func testInvalidURLs() {
        for url in ["ftp://x", "ws://", "ws://:80", "ws://h:0", "ws://h:70000", "ws://u@h", "ws://[::1", "nohost"] {
            XCTAssertThrowsError(try Endpoint(parsing: url), url) { error in
                XCTAssertEqual(error as? SocketIOError, .invalidURL(url))
            }
        }
    }

    func testQueryEncoding() {
        XCTAssertEqual(QueryEncoding.encode([("token", "a b/c+é"), ("EIO", "4")]), "token=a%20b%2Fc%2B%C3%A9&EIO=4")
    }
}

final class EngineIOCodecTests: XCTestCase {
    func testTextPackets() throws {
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .text, payload: Array("2".utf8), version: .v4), .ping([]))
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .text, payload: Array("3probe".utf8), version: .v4), .pong(Array("probe".utf8)))
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .text, payload: Array("42[\"a\"]".utf8), version: .v4), .message(Array("2[\"a\"]".utf8)))
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .text, payload: Array("1".utf8), version: .v4), .close)
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .text, payload: Array("6".utf8), version: .v3), .noop)
        XCTAssertThrowsError(try EngineIOCodec.decode(opcode: .text, payload: Array("9".utf8), version: .v4))
        XCTAssertThrowsError(try EngineIOCodec.decode(opcode: .text, payload: [], version: .v4))
        XCTAssertEqual(EngineIOCodec.encode(.pong([]), version: .v4).1, Array("3".utf8))
        XCTAssertEqual(EngineIOCodec.encode(.message(Array("0{}".utf8)), version: .v4).1, Array("40{}".utf8))
    }

    func testBinaryPacketsPerVersion() throws {
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .binary, payload: [1, 2], version: .v4), .binary([1, 2]))
        XCTAssertEqual(try EngineIOCodec.decode(opcode: .binary, payload: [4, 1, 2], version: .v3), .binary([1, 2]))
        XCTAssertThrowsError(try EngineIOCodec.decode(opcode: .binary, payload: [2, 1], version: .v3))
        XCTAssertTrue(EngineIOCodec.encode(.binary([9]), version: .v4) == (.binary, [9]))
        XCTAssertTrue(EngineIOCodec.encode(.binary([9]), version: .v3) == (.binary, [4, 9]))
    }

    func testHandshake() throws {
        let h = try EngineIOHandshake(json: Array(#"{"sid":"abc","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#.utf8))
        XCTAssertEqual(h, EngineIOHandshake(sid: "abc", pingInterval: .seconds(25), pingTimeout: .seconds(20), maxPayload: 1_000_000))
        let v3 = try EngineIOHandshake(json: Array(#"{"sid":"x","upgrades":["websocket"],"pingInterval":25000,"pingTimeout":5000}"#.utf8))
        XCTAssertNil(v3.maxPayload)
        XCTAssertThrowsError(try EngineIOHandshake(json: Array(#"{"pingInterval":1,"pingTimeout":1}"#.utf8)))
        XCTAssertThrowsError(try EngineIOHandshake(json: Array("not json".utf8)))
    }
}

final class SocketIOCodecTests: XCTestCase {
    func encode(_ packet: SocketIOPacket) -> String { String(decoding: SocketIOCodec.encode(packet), as: UTF8.self) }
    func decode(_ text: String) throws -> SocketIOPacket { try SocketIOCodec.decode(Array(text.utf8)) }

    func testEncoding() {
        XCTAssertEqual(encode(SocketIOPacket(type: .connect, data: ["token": "t"])), #"0{"token":"t"}"#)
        XCTAssertEqual(encode(SocketIOPacket(type: .connect, namespace: "/admin")), "0/admin,")
        XCTAssertEqual(encode(SocketIOPacket(type: .event, id: 12, data: ["hello", 1])), #"212["hello",1]"#)
        XCTAssertEqual(encode(SocketIOPacket(type: .ack, namespace: "/admin", id: 3, data: ["ok"])), #"3/admin,3["ok"]"#)
        var binary = SocketIOPacket(type: .binaryEvent, data: ["up", SocketIOBinary.placeholder(0)])
        binary.attachmentCount = 1
        XCTAssertEqual(encode(binary), #"51-["up",{"_placeholder":true,"num":0}]"#)
        XCTAssertEqual(encode(SocketIOPacket(type: .disconnect)), "1")
    }

    func testDecoding() throws {
        XCTAssertEqual(try decode(#"0{"sid":"s1"}"#), SocketIOPacket(type: .connect, data: ["sid": "s1"]))
        XCTAssertEqual(try decode("0/admin,"), SocketIOPacket(type: .connect, namespace: "/admin"))
        XCTAssertEqual(try decode(#"2/admin,7["ev",{"a":[1,2]}]"#), SocketIOPacket(type: .event, namespace: "/admin", id: 7, data: ["ev", ["a": [1, 2]]]))
        XCTAssertEqual(try decode(#"31["x"]"#), SocketIOPacket(type: .ack, id: 1, data: ["x"]))
        XCTAssertEqual(try decode(#"4{"message":"no","data":{"code":1}}"#).data?["message"], "no")
        XCTAssertEqual(try decode(#"4"Unable to connect""#).data, "Unable to connect")
        XCTAssertEqual(try decode(#"4/nope,"Unable to connect""#).namespace, "/nope")
        let binary = try decode(#"62-/admin,5[{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        XCTAssertEqual(binary.type, .binaryAck)
        XCTAssertEqual(binary.attachmentCount, 2)
        XCTAssertEqual(binary.namespace, "/admin")
        XCTAssertEqual(binary.id, 5)
        XCTAssertEqual(try decode("0/chat?token=1,").namespace, "/chat")
    }

    func testRefusalForms() {
        XCTAssertEqual(SocketIOSession.refusal(["message": "bad token", "data": ["code": "E401"]]),
                       .connectionRefused(message: "bad token", data: ["code": "E401"]))
        XCTAssertEqual(SocketIOSession.refusal("Unable to connect"), .connectionRefused(message: "Unable to connect", data: nil))
        XCTAssertEqual(SocketIOSession.refusal(nil), .connectionRefused(message: "refused", data: nil))
    }

    func testMalformedPacketsAreErrors() {
        for text in ["", "9", "x", #"2["#, #"2{"a":1}"#, "2[1]", "3[]", "5[\"a\"]", "51001-[\"a\"]", "2999999999999999999[\"a\"]"] {
            XCTAssertThrowsError(try decode(text), text)
        }
    }

    func testBinaryAssembler() throws {
        var assembler = SocketIOBinaryAssembler()
        var packet = SocketIOPacket(type: .binaryEvent, data: ["e", SocketIOBinary.placeholder(0), SocketIOBinary.placeholder(1)])
        packet.attachmentCount = 2
        XCTAssertNil(try assembler.start(packet))
        XCTAssertNil(try assembler.add([1]))
        let complete = try XCTUnwrap(try assembler.add([2, 3]))
        XCTAssertEqual(complete.1, [[1], [2, 3]])
        XCTAssertThrowsError(try assembler.add([4]))
        XCTAssertNotNil(try assembler.start(SocketIOPacket(type: .event, data: ["plain"])))
        let payload = SocketIOPayload(args: Array(packet.data?.arrayValue?.dropFirst() ?? []), attachments: complete.1)
        XCTAssertEqual(payload.binary(payload.args[1]), [2, 3])
        XCTAssertNil(payload.binary("text"))
    }
}

final class WebSocketCodecTests: XCTestCase {
    func serverFrame(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [first]
        if payload.count < 126 {
            out.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        return out + payload
    }

    func testLengthsAndPartialInput() throws {
        var decoder = WebSocketFrameDecoder(maxPayload: 1 << 20)
        let big = [UInt8](repeating: 7, count: 70_000)
        let bytes = serverFrame(0x81, Array("hi".utf8)) + serverFrame(0x82, [UInt8](repeating: 1, count: 300)) + serverFrame(0x02, big)
        for chunk in stride(from: 0, to: bytes.count, by: 1000) { decoder.append(bytes[chunk..<min(chunk + 1000, bytes.count)]) }
        XCTAssertEqual(try decoder.next(), WebSocketFrame(fin: true, opcode: .text, payload: Array("hi".utf8)))
        XCTAssertEqual(try decoder.next()?.payload.count, 300)
        let last = try XCTUnwrap(try decoder.next())
        XCTAssertEqual(last, WebSocketFrame(fin: false, opcode: .binary, payload: big))
        XCTAssertNil(try decoder.next())
        decoder.append([0x81])
        XCTAssertNil(try decoder.next())
    }

    func assertViolation(_ bytes: [UInt8], code: UInt16, maxPayload: Int = 1 << 20, file: StaticString = #filePath, line: UInt = #line) {
        var decoder = WebSocketFrameDecoder(maxPayload: maxPayload)
        decoder.append(bytes)
        XCTAssertThrowsError(try decoder.next(), file: file, line: line) { error in
            XCTAssertEqual((error as? WebSocketProtocolError)?.code, code, file: file, line: line)
        }
    }

    func testViolations() {
        assertViolation(serverFrame(0xC1, [1]), code: 1002)  // RSV1
        assertViolation(serverFrame(0x83, [1]), code: 1002)  // opcode 3
        assertViolation(serverFrame(0x8B, [1]), code: 1002)  // opcode 0xB
        assertViolation([0x81, 0x81, 1, 2, 3, 4, 5], code: 1002)  // masked by the server
        assertViolation(serverFrame(0x09, [1]), code: 1002)  // fragmented ping
        assertViolation(serverFrame(0x89, [UInt8](repeating: 0, count: 126)), code: 1002)  // long ping
        assertViolation(serverFrame(0x82, [UInt8](repeating: 0, count: 2000)), code: 1009, maxPayload: 1000)
        assertViolation([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1], code: 1002)  // 64-bit length, high bit
    }

    func testClientFramesAreMasked() throws {
        let payload = Array((0..<300).map { UInt8($0 & 0xFF) })
        var out: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, mask: 0x0102_0304, into: &out)
        XCTAssertEqual(Array(out[0..<4]), [0x82, 0x80 | 126, 0x01, 0x2C])
        XCTAssertEqual(Array(out[4..<8]), [1, 2, 3, 4])
        let unmasked = out[8...].enumerated().map { $0.element ^ [1, 2, 3, 4][$0.offset & 3] }
        XCTAssertEqual(unmasked, payload)
        var long: [UInt8] = []
        WebSocketFrameEncoder.encode(opcode: .text, payload: [UInt8](repeating: 65, count: 70_000), mask: 0, into: &long)
        XCTAssertEqual(Array(long[0..<10]), [0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    func testHandshakeHelpers() throws {
        XCTAssertEqual(Encoding.webSocketAccept(for: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        XCTAssertEqual(Encoding.base64(Encoding.sha1([])), "2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
        XCTAssertEqual(Encoding.base64(Encoding.sha1(Array(String(repeating: "a", count: 1000).utf8))), "KR6abGaZSUm1e6XmUDYemPw2sbo=")
        XCTAssertEqual(Encoding.base64([]), "")
        XCTAssertEqual(Encoding.base64(Array("f".utf8)), "Zg==")
        XCTAssertEqual(Encoding.base64(Array("fo".utf8)), "Zm8=")
        XCTAssertEqual(Encoding.base64(Array("foobar".utf8)), "Zm9vYmFy")
        let response = try Handshake.parseResponse(Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".utf8))
        XCTAssertNoThrow(try Handshake.validate(response, key: "dGhlIHNhbXBsZSBub25jZQ=="))
        XCTAssertThrowsError(try Handshake.validate(response, key: "AAAAAAAAAAAAAAAAAAAAAA=="))
        XCTAssertFalse(Handshake.isToken("Bad Header"))
        XCTAssertTrue(Handshake.isToken("x-tenant-id"))
    }

    func testUTF8Validation() {
        XCTAssertTrue(Encoding.isValidUTF8(Array("héllo ✓ 😀".utf8)))
        XCTAssertFalse(Encoding.isValidUTF8([0xFF]))
        XCTAssertFalse(Encoding.isValidUTF8([0xC0, 0xAF]))  // overlong
        XCTAssertFalse(Encoding.isValidUTF8([0xED, 0xA0, 0x80]))  // surrogate
        XCTAssertFalse(Encoding.isValidUTF8([0xF4, 0x90, 0x80, 0x80]))  // above U+10FFFF
        XCTAssertFalse(Encoding.isValidUTF8([0xE2, 0x82]))  // truncated
    }

    func testClosePayloadKeepsUTF8Whole() {
        let payload = Handshake.closePayload(code: 1000, reason: String(repeating: "é", count: 100))
        XCTAssertLessThanOrEqual(payload.count, 125)
        XCTAssertTrue(Encoding.isValidUTF8(payload[2...]))
    }
}

final class BackoffTests: XCTestCase {
    typealias Instant = ContinuousClock.Instant

    func testCeilingsGrowToTheCap() {
        let backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 500, capMs: 30_000, factor: 2))
        XCTAssertEqual((0..<9).map { backoff.ceilingMs(afterFailures: $0) }, [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
        XCTAssertEqual(backoff.ceilingMs(afterFailures: 10_000), 30_000)
    }

    func testFullJitterWithInjectedRandomSource() {
        var backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 1000, factor: 3))
        var random = SeededRandom(state: 42)
        var again = SeededRandom(state: 42)
        var delays: [Duration] = []
        for attempt in 0..<6 {
            let delay = backoff.nextDelay(using: &random)
            XCTAssertGreaterThanOrEqual(delay, .zero)
            XCTAssertLessThanOrEqual(delay, .milliseconds(backoff.ceilingMs(afterFailures: attempt)))
            delays.append(delay)
        }
        var replay = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 1000, factor: 3))
        XCTAssertEqual((0..<6).map { _ in replay.nextDelay(using: &again) }, delays)
        XCTAssertGreaterThan(Set(delays).count, 3, "jitter spreads the delays")
    }

    func testResetOnlyAfterAStableConnection() {
        var backoff = ReconnectBackoff<Instant>(policy: ReconnectPolicy(baseMs: 100, capMs: 10_000, factor: 2, stableAfterMs: 5000))
        var random = SeededRandom(state: 1)
        let t0 = Instant.now
        for _ in 0..<4 { _ = backoff.nextDelay(using: &random) }
        XCTAssertEqual(backoff.failures, 4)
        backoff.connected(at: t0)
        backoff.disconnected(at: t0 + .seconds(2))  // flapping: no reset
        XCTAssertEqual(backoff.failures, 4)
        backoff.connected(at: t0 + .seconds(3))
        backoff.disconnected(at: t0 + .seconds(9))  // lasted 6 s: stable
        XCTAssertEqual(backoff.failures, 0)
        XCTAssertLessThanOrEqual(backoff.nextDelay(using: &random), .milliseconds(100))
    }
}

final class TimerHeapTests: XCTestCase {
    func testDueTimersComeOutEarliestFirstAndInSchedulingOrderOnTies() {
        var heap = TimerHeap()
        let fired = Locked<[Int]>([])
        let deadlines: [(UInt64, Int)] = [(50, 1), (10, 2), (30, 3), (10, 4), (90, 5), (30, 6), (20, 7)]
        for (sequence, (deadline, label)) in deadlines.enumerated() {
            heap.insert(TimerHeap.Timer(deadline: deadline, sequence: UInt64(sequence), block: { fired.withLock { $0.append(label) } }))
        }
        XCTAssertEqual(heap.earliest, 10)
        for timer in heap.popDue(now: 30) { timer.block() }
        XCTAssertEqual(fired.withLock { $0 }, [2, 4, 7, 3, 6])
        XCTAssertEqual(heap.count, 2)
        XCTAssertEqual(heap.earliest, 50)
        XCTAssertTrue(heap.popDue(now: 49).isEmpty)
        for timer in heap.popDue(now: .max) { timer.block() }
        XCTAssertEqual(fired.withLock { $0 }, [2, 4, 7, 3, 6, 1, 5])
        XCTAssertTrue(heap.isEmpty)
    }

    func testAThousandRandomDeadlinesComeOutSorted() {
        var heap = TimerHeap()
        var generator = SystemRandomNumberGenerator()
        for sequence in 0..<1000 {
            heap.insert(TimerHeap.Timer(deadline: UInt64.random(in: 0..<100, using: &generator), sequence: UInt64(sequence), block: {}))
        }
        let due = heap.popDue(now: .max)
        XCTAssertEqual(due.count, 1000)
        XCTAssertTrue(zip(due, due.dropFirst()).allSatisfy { !$1.precedes($0) })
    }
}
