import Testing
import IPCProtocol
import JSONValue

@Suite struct RPCMessageTests {
    private func decode(_ text: String) -> Result<RPCIncoming, RPCDecodeFailure> {
        RPCIncoming.decode(line: Array(text.utf8))
    }

    @Test func requestAndNotification() {
        #expect(decode(#"{"jsonrpc":"2.0","id":7,"method":"daemon.status"}"#)
            == .success(.request(RPCRequest(id: 7, method: "daemon.status"))))
        #expect(decode(#"{"jsonrpc":"2.0","method":"player.time","params":{"seconds":3}}"#)
            == .success(.notification(method: "player.time", params: ["seconds": 3])))
    }

    @Test func badJSONIsParseError() throws {
        let failure = try #require(decode("{not json").failureValue)
        #expect(failure.error.code == RPCErrorCode.parseError)
        #expect(failure.id == .null)
    }

    @Test func badUTF8IsParseError() throws {
        var bytes = Array(#"{"jsonrpc":"2.0","id":1,"method":""#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Array(#""}"#.utf8)
        let failure = try #require(RPCIncoming.decode(line: bytes).failureValue)
        #expect(failure.error.code == RPCErrorCode.parseError)
    }

    @Test(arguments: [
        #"[{"jsonrpc":"2.0","id":1,"method":"a"}]"#,
        #"42"#,
        #"{"id":1,"method":"a"}"#,
        #"{"jsonrpc":"1.0","id":1,"method":"a"}"#,
        #"{"jsonrpc":"2.0","id":{"x":1},"method":"a"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":5}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"a","params":"x"}"#,
        #"{"jsonrpc":"2.0","id":1}"#,
    ])
    func notARequestIsInvalidRequest(_ text: String) throws {
        let failure = try #require(decode(text).failureValue)
        #expect(failure.error.code == RPCErrorCode.invalidRequest)
    }

    @Test func invalidRequestKeepsAReadableID() throws {
        let failure = try #require(decode(#"{"jsonrpc":"1.0","id":"abc","method":"a"}"#).failureValue)
        #expect(failure.id == "abc")
    }

    @Test func responsesRoundTrip() {
        let ok = RPCResponse(id: 3, outcome: .success(["state": "joined"]))
        #expect(RPCIncoming.decode(line: ok.line().dropLast()) == .success(.response(ok)))
        let error = RPCResponse(id: "x", outcome: .failure(.daemon(.noRoom, "no room joined")))
        #expect(RPCIncoming.decode(line: error.line().dropLast()) == .success(.response(error)))
        if case .failure(let rpc) = error.outcome {
            #expect(rpc.name == "interactive.NoRoom")
            #expect(rpc.code == -32000)
        }
    }

    @Test func eventLineIsTheSameAsTheGenericEncoding() {
        for seq in [Optional(7), nil] {
            let envelope = EventEnvelope(bootId: "b\"1", seq: seq, type: "overlay.show", time: "2026-11-29T00:00:00.000Z",
                                         data: ["overlayId": "ov-1", "raw": ["z": 1, "a": [true, nil, 2.5]], "url": "x?a=1&b=\u{1}"])
            #expect(envelope.line() == RPCRequest(id: nil, method: "event", params: envelope.params).line())
        }
    }

    @Test func eventEnvelopeRoundTrip() throws {
        let envelope = EventEnvelope(bootId: "b1", seq: 4, type: "session.state", time: "2026-11-29T00:00:00.000Z",
                                     data: ["loggedIn": false])
        let message = try #require(try? decode(String(decoding: envelope.line().dropLast(), as: UTF8.self)).get())
        guard case .notification(let method, let params) = message else {
            Issue.record("not a notification")
            return
        }
        #expect(method == "event")
        #expect(EventEnvelope(params: params) == envelope)
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

/// Ids a Double cannot hold exactly come back as they were sent.
@Suite struct ExactRequestIDTests {
    @Test(arguments: ["12345678901234567890", "9007199254740993", "-9223372036854775809", "1.10", "2E3"])
    func largeIdsAreEchoedAsSent(_ literal: String) throws {
        let line = Array(#"{"jsonrpc":"2.0","params":{"id":5},"id":\#(literal),"method":"daemon.hello"}"#.utf8)
        guard case .success(.request(let request)) = RPCIncoming.decode(line: line) else {
            Issue.record("not a request")
            return
        }
        let reply = RPCResponse(id: request.id ?? .null, idLiteral: request.idLiteral, outcome: .success(["ok": true])).line()
        #expect(String(decoding: reply, as: UTF8.self) == #"{"id":\#(literal),"jsonrpc":"2.0","result":{"ok":true}}"# + "\n")
        let parsed = try JSONValue.parse(reply.dropLast())
        #expect(parsed["result"] == ["ok": true])
    }

    @Test func ordinaryIdsAreUnchanged() {
        let line = Array(#"{"jsonrpc":"2.0","id":42,"method":"daemon.hello"}"#.utf8)
        guard case .success(.request(let request)) = RPCIncoming.decode(line: line) else {
            Issue.record("not a request")
            return
        }
        #expect(request.idLiteral == nil)
    }

    @Test func errorsEchoTheExactIdToo() {
        let line = Array(#"{"jsonrpc":"1.0","id":12345678901234567890,"method":"x"}"#.utf8)
        guard case .failure(let failure) = RPCIncoming.decode(line: line) else {
            Issue.record("not a failure")
            return
        }
        let reply = RPCResponse(id: failure.id, idLiteral: failure.idLiteral, outcome: .failure(failure.error)).line()
        #expect(String(decoding: reply, as: UTF8.self).contains(#""id":12345678901234567890,"#))
    }
}
