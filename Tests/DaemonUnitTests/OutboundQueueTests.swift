import Testing
@testable import InteractiveDaemon
#if canImport(Glibc)
import Glibc
#endif

@Suite struct OutboundQueueTests {
    private func text(_ items: [OutboundQueue.Item]?) -> [String] {
        (items ?? []).map { item in
            switch item {
            case .line(let line): return String(decoding: line, as: UTF8.self)
            case .lagged(let missed): return "lagged(\(missed))"
            }
        }
    }

    @Test func eventsOverTheLimitBecomeOneLagMarkerWhereTheGapIs() async {
        let queue = OutboundQueue(eventLimit: 2)
        for name in ["e1", "e2", "e3", "e4"] { queue.pushEvent(Array(name.utf8)) }
        queue.pushReply(Array("r1".utf8))
        #expect(text(await queue.next()) == ["e1", "e2", "lagged(2)", "r1"])
        queue.pushEvent(Array("e5".utf8))
        #expect(text(await queue.next()) == ["e5"])
    }

    @Test func eventsOverTheByteLimitAreCountedAsMissed() async {
        let queue = OutboundQueue(eventLimit: 100, eventByteLimit: 10)
        for name in ["e1xxx", "e2xxx", "e3", "e4"] { queue.pushEvent(Array(name.utf8)) }
        #expect(text(await queue.next()) == ["e1xxx", "e2xxx", "lagged(2)"])
        queue.pushEvent(Array("e5-longer-than-the-limit".utf8))
        #expect(text(await queue.next()) == ["e5-longer-than-the-limit"], "a line alone is always taken")
    }

    @Test func repliesAreNeverDroppedButAnUnreadingClientIsCut() async {
        let queue = OutboundQueue(eventLimit: 1, replyByteLimit: 6)
        for index in 0..<3 { queue.pushReply(Array("r\(index)".utf8)) }
        #expect(!queue.overflowed)
        queue.pushReply(Array("r3".utf8))
        #expect(queue.overflowed)
        #expect(text(await queue.next()) == ["r0", "r1", "r2"])
        #expect(await queue.next() == nil)
    }

    @Test func closingDrainsThenEnds() async {
        let queue = OutboundQueue(eventLimit: 4)
        queue.pushReply(Array("last".utf8))
        queue.close()
        queue.pushReply(Array("ignored".utf8))
        #expect(text(await queue.next()) == ["last"])
        #expect(await queue.next() == nil)
    }
}

/// The direct send: a line pushed while the writer is idle goes onto the socket from the pusher.
@Suite struct OutboundQueueDirectSendTests {
    /// A connected non-blocking socket pair: `[0]` is the queue's, `[1]` the peer's.
    private func socketPair(sendBuffer: Int32? = nil) throws -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        let status = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds)
        try #require(status == 0)
        if var size = sendBuffer {
            setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        return (fds[0], fds[1])
    }

    /// Everything the peer can read now.
    private func drain(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return bytes }
            bytes += buffer[0..<count]
        }
    }

    /// Starts a writer waiting in `next()` and returns once it is parked there (bounded).
    private func idleWriter(_ queue: OutboundQueue) async throws -> Task<[OutboundQueue.Item]?, Never> {
        let writer = Task { await queue.next() }
        let deadline = ContinuousClock.now + .seconds(5)
        while !queue.isWriterIdle {
            try #require(ContinuousClock.now < deadline, "the writer never waited")
            await Task.yield()
        }
        return writer
    }

    @Test func aLinePushedWhileTheWriterIsIdleIsSentWithoutWakingIt() async throws {
        let (mine, peer) = try socketPair()
        defer { close(mine); close(peer) }
        let queue = OutboundQueue(eventLimit: 4, socket: mine)
        let writer = try await idleWriter(queue)
        queue.pushEvent(Array("e1\n".utf8))
        queue.pushReply(Array("r1\n".utf8))
        #expect(String(decoding: drain(peer), as: UTF8.self) == "e1\nr1\n")
        #expect(queue.isWriterIdle)
        queue.close()
        #expect(await writer.value == nil)
    }

    @Test func whatAFullSocketDoesNotTakeGoesToTheWriterInOrder() async throws {
        let (mine, peer) = try socketPair(sendBuffer: 4096)
        defer { close(mine); close(peer) }
        let queue = OutboundQueue(eventLimit: 4, socket: mine)
        let writer = try await idleWriter(queue)
        let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        queue.pushEvent(big)
        queue.pushEvent(Array("after\n".utf8))
        let sentDirectly = drain(peer)
        #expect(!sentDirectly.isEmpty && sentDirectly.count < big.count)
        // The writer was woken with the remainder; the next line queued behind it.
        var rest: [UInt8] = []
        for item in (await writer.value ?? []) + (await queue.next() ?? []) {
            if case .line(let line) = item { rest += line }
        }
        #expect(sentDirectly + rest == big + Array("after\n".utf8))
    }

    @Test func withoutDirectSendTheIdleWriterGetsTheLine() async throws {
        let (mine, peer) = try socketPair()
        defer { close(mine); close(peer) }
        let queue = OutboundQueue(eventLimit: 4, socket: mine)
        let writer = try await idleWriter(queue)
        queue.pushEvent(Array("e1\n".utf8), sendDirectly: false)
        #expect(drain(peer).isEmpty)
        guard case .line(let line)? = await writer.value?.first else {
            Issue.record("the writer did not get the line")
            return
        }
        #expect(line == Array("e1\n".utf8))
    }

    @Test func aClosedQueueNeverSendsAgain() async throws {
        let (mine, peer) = try socketPair()
        defer { close(mine); close(peer) }
        let queue = OutboundQueue(eventLimit: 4, socket: mine)
        let writer = try await idleWriter(queue)
        queue.close()
        #expect(await writer.value == nil)
        queue.pushEvent(Array("late\n".utf8))
        queue.pushReply(Array("late\n".utf8))
        #expect(drain(peer).isEmpty)
    }
}
