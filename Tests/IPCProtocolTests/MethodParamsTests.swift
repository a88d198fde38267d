import IPCProtocol
import JSONValue
import Testing

/// The typed params refuse what the daemon refuses, with its `-32602` messages, naming the first
/// bad member.
@Suite struct MethodParamsTests {
    private func refusal<Params: MethodParams>(_: Params.Type, _ params: JSONValue?) -> String? {
        do {
            _ = try Params(params: params)
            return nil
        } catch {
            #expect(error.code == RPCErrorCode.invalidParams)
            return error.message
        }
    }

    @Test func badParamsAreRefusedWithTheDaemonsMessages() {
        #expect(refusal(RoomJoinParams.self, .array([])) == "Invalid params: params must be an object")
        #expect(refusal(DaemonStatusParams.self, "x") == "Invalid params: params must be an object")
        #expect(refusal(RoomJoinParams.self, [:]) == "Invalid params: 'mediaId' is required")
        #expect(refusal(RoomJoinParams.self, ["mediaId": ""]) == "Invalid params: 'mediaId' must be a non-empty string")
        #expect(refusal(RoomJoinParams.self, ["mediaId": "m1", "mode": "tv"]) == "Invalid params: 'mode' must be one of live, vod")
        #expect(refusal(RoomJoinParams.self, ["mediaId": "m1", "timeoutMs": 1.5])
                == "Invalid params: 'timeoutMs' must be a whole number from 0 to 600000")
        #expect(refusal(RoomJoinParams.self, ["mediaId": "m1", "fanclub": "yes"]) == "Invalid params: 'fanclub' must be true or false")
        #expect(refusal(SessionLoginParams.self, ["token": "t\r\nX-Injected: 1", "userId": "u"])
                == "Invalid params: 'token' must not contain control characters (line breaks, NUL, …)")
        #expect(refusal(SessionLoginParams.self, ["token": "t"]) == "Invalid params: 'userId' is required")
        #expect(refusal(EventsSubscribeParams.self, ["types": ["overlay.", 3]]) == "Invalid params: 'types' must be an array of strings")
        #expect(refusal(EventsSubscribeParams.self, ["types": ["a\u{2028}"]])
                == "Invalid params: 'types' must not contain control characters (line breaks, NUL, …)")
        #expect(refusal(PlayerTimeParams.self, ["seconds": -1]) == "Invalid params: 'seconds' must not be negative")
        #expect(refusal(PlayerTimeParams.self, ["seconds": "12"]) == "Invalid params: 'seconds' must be a number")
        #expect(refusal(PlayerStateParams.self, ["state": "stopped"])
                == "Invalid params: 'state' must be one of playing, paused, buffering, ended")
        #expect(refusal(Viewport.self, ["width": 1280]) == "Invalid params: 'width' and 'height' are required")
        #expect(refusal(Viewport.self, ["width": 0, "height": 720]) == "Invalid params: 'width' must be a whole number from 1 to 100000")
        #expect(refusal(OverlayRenderedParams.self, ["overlayId": "ov-1"]) == "Invalid params: 'status' is required")
        #expect(refusal(OverlayBridgeParams.self, ["overlayId": "ov-1", "message": "not json"])
                == "Invalid params: 'message' must be {type, data} or the JSON string the template posted")
        #expect(refusal(AnswerConfirmParams.self, ["overlayId": "ov-1"]) == "Invalid params: 'accept' is required")
        #expect(refusal(ConfigSetParams.self, nil) == "Invalid params: give at least one configuration key")
        #expect(refusal(PlaybackStartParams.self, ["filmId": "f1", "episodeNo": 0])
                == "Invalid params: 'episodeNo' must be a whole number from 1 to 2147483647")
        #expect(refusal(PlaybackStartParams.self, ["filmId": "f1", "episodeNo": 1, "device": "x"])
                == "Invalid params: 'device' must be {unionInfo, drmKek}")
        #expect(refusal(PlaybackForegroundParams.self, ["position": -0.5]) == "Invalid params: 'position' must not be negative")
    }

    @Test func defaultsApplyWhereTheDocSaysSo() throws {
        let join = try RoomJoinParams(params: ["mediaId": 42])
        #expect(join == RoomJoinParams(mediaId: "42", mode: .live, fanclub: false, timeoutMs: nil))
        #expect(join.effectiveTimeoutMs == 10_000)
        #expect(try OverlayAttachedParams(params: ["overlayId": "ov-1"]).claim)
        #expect(try !OverlayAttachedParams(params: ["overlayId": "ov-1", "claim": false]).claim)
        #expect(try !ConfigGetParams(params: nil).origin)
    }

    @Test func theBridgeMessageIsReadFromTheObjectOrItsText() throws {
        let text = try OverlayBridgeParams(params: ["overlayId": "ov-1",
                                                    "message": #"{"type":"INTERACTIVE_ACTION_REPORT","data":{"answer":{"choice":"A"}}}"#])
        #expect(text.posted.kind == .actionReport && text.posted.data == ["answer": ["choice": "A"]])
        #expect(text.params?["message"] == text.message)
        let object = OverlayBridgeParams(overlayId: "ov-1", posted: BridgeMessage(type: "INTERACTIVE_SHOW_ANALYTICS", data: [:]),
                                         claim: false)
        #expect(object.params == ["overlayId": "ov-1", "message": ["type": "INTERACTIVE_SHOW_ANALYTICS", "data": [:]], "claim": false])
    }

    @Test func theLoginParamsNeverPrintTheToken() throws {
        let login = try SessionLoginParams(params: ["token": "secret-token", "userId": "alice"])
        #expect(!"\(login)".contains("secret-token"))
    }
}
