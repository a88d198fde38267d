import Testing
import IPCProtocol

@Suite struct LineFramerTests {
    private func lines(_ text: String) -> LineFramer.Frame { .line(Array(text.utf8)) }

    @Test func severalMessagesInOneRead() {
        var framer = LineFramer()
        #expect(framer.append(Array("a\nbc\n\nd".utf8)) == [lines("a"), lines("bc"), lines("")])
        #expect(framer.bufferedByteCount == 1)
        #expect(framer.append(Array("\n".utf8)) == [lines("d")])
    }

    @Test func oneMessageSplitAcrossManyReads() {
        var framer = LineFramer()
        let message = Array(#"{"jsonrpc":"2.0","id":1,"method":"daemon.status"}"#.utf8)
        var frames: [LineFramer.Frame] = []
        for byte in message { frames += framer.append([byte]) }
        #expect(frames.isEmpty)
        #expect(framer.append([0x0A]) == [.line(message)])
    }

    @Test func lineOverTheLimitIsReportedOnceAndDiscarded() {
        var framer = LineFramer(maxLineBytes: 8)
        #expect(framer.append(Array("0123456".utf8)) == [])
        #expect(framer.append(Array("789".utf8)) == [.oversized])
        #expect(framer.append(Array("more and more".utf8)) == [])
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.append(Array("tail\nok\n".utf8)) == [lines("ok")])
    }

    @Test func longLineInOneReadThenNormalLine() {
        var framer = LineFramer(maxLineBytes: 4)
        #expect(framer.append(Array("toolong\nfine\n".utf8)) == [.oversized, lines("fine")])
    }

    @Test func exactlyAtTheLimitIsAccepted() {
        var framer = LineFramer(maxLineBytes: 4)
        #expect(framer.append(Array("abcd\n".utf8)) == [lines("abcd")])
    }
}
