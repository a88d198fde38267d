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

/// A message whose release can be observed.
private final class Payload: Sendable {}

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

    /// Under a flood the queue may never empty: a message taken out must not stay referenced
    /// by it until it does (floods.py: 20,000 overlays held ~6 MiB of decoded events that way).
    @Test func aTakenMessageIsReleasedWhileOthersAreQueued() async {
        let mailbox = Mailbox<Payload>()
        weak var first: Payload?
        do {
            let payload = Payload()
            first = payload
            mailbox.send(payload)
        }
        mailbox.send(Payload())
        var taken = await mailbox.next()
        #expect(taken != nil)
        taken = nil
        #expect(first == nil, "the mailbox still holds a message it handed out")
    }

    @Test func aQueueThatNeverEmptiesKeepsDeliveringInOrder() async {
        let mailbox = Mailbox<Int>()
        var read: [Int] = []
        var sent = 0
        // Two sent for each taken: the queue never empties, its taken prefix is dropped as it grows.
        for _ in 0..<3 * Mailbox<Int>.keptCapacity {
            mailbox.send(sent)
            sent += 1
            mailbox.send(sent)
            sent += 1
            if let message = await mailbox.next() { read.append(message) }
        }
        mailbox.finish()
        while let message = await mailbox.next() { read.append(message) }
        #expect(read == Array(0..<sent))
    }
}
