import Runtime
import Testing

/// An actor pinned to the loop reading a mailbox, as TrackingService reads its feed.
private actor Reader {
    nonisolated var unownedExecutor: UnownedSerialExecutor { EventLoop.shared.asUnownedSerialExecutor() }
    private(set) var onLoop = true

    func readAll(_ mailbox: Mailbox<Int>) async -> [Int] {
        var read: [Int] = []
        while let message = await mailbox.next() {
            onLoop = onLoop && EventLoop.shared.inLoop
            read.append(message)
        }
        return read
    }
}

@Suite struct MailboxTests {
    @Test func deliversInOrderOnTheReceiversActorThenEndsAfterFinish() async {
        let mailbox = Mailbox<Int>()
        let reader = Reader()
        for value in 0..<5 { mailbox.send(value) }
        async let read = reader.readAll(mailbox)
        for value in 5..<1_000 { mailbox.send(value) }
        mailbox.finish()
        mailbox.send(-1)
        #expect(await read == Array(0..<1_000))
        #expect(await reader.onLoop, "next() resumed off the receiver's executor")
    }

    @Test func aCancelledReceiverGetsNil() async {
        let mailbox = Mailbox<Int>()
        let receiver = Task { await mailbox.next() }
        receiver.cancel()
        #expect(await receiver.value == nil)
    }
}
