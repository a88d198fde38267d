import Foundation
import IPCProtocol
import JSONValue
import Testing
@testable import InteractiveClient

/// The Swift client library (`InteractiveClient`) against the real daemon.
@Suite struct SwiftClientLibraryTests {
    @Test func callsReturnResultsAndDaemonErrorsCarryCodeAndName() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            let hello = try await client.hello(client: "swift-test")
            #expect(hello.protocolVersion == 1)
            #expect(hello.role == "control")
            #expect(hello.capabilities.contains("overlay.bridge"))
            let noRoom = try await rpcError { _ = try await client.call("room.leave") }
            #expect(noRoom.code == RPCErrorCode.daemonError)
            #expect(noRoom.name == DaemonErrorName.noRoom.rawValue)
            let unknown = try await rpcError { _ = try await client.call("no.such") }
            #expect(unknown.code == RPCErrorCode.methodNotFound)
            #expect(unknown.name == nil)
            let session = try await client.login(token: "token-x", userId: "x", displayName: "X")
            #expect(session.loggedIn && session.userId == "x")
            await client.close()
            await #expect(throws: IPCClientError.self) { try await client.status() }
        }
    }

    @Test func concurrentCallsGetTheirOwnReplies() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            let names = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<200 {
                    group.addTask { (index, try await client.call("daemon.hello", ["client": .string("c\(index)"), "protocol": 1])["daemon"]?.stringValue) }
                }
                var names: [Int: String?] = [:]
                for try await (index, name) in group { names[index] = name }
                return names
            }
            #expect(names.count == 200)
            #expect(names.values.allSatisfy { $0 == "interactived" })
        }
    }

    @Test func theStreamEndsWhenTheClientClosesOrItsTaskIsCancelled() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            let (subscribed, signal) = AsyncStream.makeStream(of: Void.self)
            // Unstructured, so that the test can cancel the consumer on its own.
            let consumer = Task {
                var count = 0
                for try await _ in client.events(types: ["config."]) {
                    count += 1
                    signal.yield()
                }
                return count
            }
            for await _ in subscribed { break }
            consumer.cancel()
            // Only the subscription came; the cancelled consumer's loop ended.
            #expect(try await consumer.value == 1)

            var events = client.events().makeAsyncIterator()
            _ = try await next(&events)
            await client.close()
            #expect(try await events.next() == nil)
        }
    }

    @Test func theStreamStartsWithTheSnapshotAndSkipsSeqsOfFilteredTypes() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            let other = try await InteractiveClient.connect(path: daemon.socketPath)
            var events = client.events(types: ["config."]).makeAsyncIterator()
            guard case .subscribed(let subscription) = try await next(&events) else { throw TestFailure("no snapshot first") }
            #expect(subscription.snapshot["bootId"] == .string(subscription.bootId))
            #expect(subscription.snapshot["session"]?["loggedIn"] == false)

            _ = try await other.call("config.set", ["deviceClass": "tv"])
            let first = try await nextEvent(&events)
            #expect(first.type == EventType.configChanged && first.data["deviceClass"] == "tv")
            _ = try await other.login(token: "token-x", userId: "x", displayName: "X")
            _ = try await other.call("config.set", ["deviceClass": "kiosk"])
            let second = try await nextEvent(&events)
            #expect(second.type == EventType.configChanged && second.data["deviceClass"] == "kiosk")
            // session.state took the seq in between: a gap under the filter, not a loss.
            #expect(try #require(second.seq) == (first.seq ?? 0) + 2)
        }
    }

    @Test func aDroppedConnectionIsResubscribedFromTheLastSeqSeen() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            let other = try await InteractiveClient.connect(path: daemon.socketPath)
            var events = client.events(types: ["config."]).makeAsyncIterator()
            guard case .subscribed(let before) = try await next(&events) else { throw TestFailure("no snapshot first") }
            _ = try await other.call("config.set", ["deviceClass": "a"])
            let seen = try await nextEvent(&events)

            await client.dropConnection()
            // Emitted while this client has no connection: replayed after it resubscribes.
            _ = try await other.call("config.set", ["deviceClass": "b"])
            _ = try await other.call("config.set", ["deviceClass": "c"])
            guard case .subscribed(let after) = try await next(&events) else { throw TestFailure("no resubscription") }
            #expect(after.bootId == before.bootId)
            let replayed = [try await nextEvent(&events), try await nextEvent(&events)]
            #expect(replayed.map { $0.data["deviceClass"] } == ["b", "c"])
            #expect(replayed.compactMap(\.seq) == [(seen.seq ?? 0) + 1, (seen.seq ?? 0) + 2])
            #expect(after.seq == replayed.last?.seq)
        }
    }

    @Test func aDaemonRestartIsSurfacedAndTheStreamResubscribesWithSince() async throws {
        let directory = try TemporaryDirectory()
        let first = try await DaemonProcess(directory: directory)
        let socket = first.socketPath
        try await withDeadline(seconds: 40) {
            let client = try await InteractiveClient.connect(path: socket)
            var events = client.events(types: ["config."]).makeAsyncIterator()
            guard case .subscribed(let before) = try await next(&events) else { throw TestFailure("no snapshot first") }
            _ = try await client.call("config.set", ["deviceClass": "before"])
            _ = try await nextEvent(&events)

            #expect(try await first.stop() == 0)
            await #expect(throws: IPCClientError.self) { try await client.status() }
            let second = try await DaemonProcess(directory: directory)
            guard case .restarted(let previous, let bootId) = try await next(&events) else { throw TestFailure("no restart") }
            #expect(previous == before.bootId)
            #expect(bootId != before.bootId)
            guard case .subscribed(let after) = try await next(&events) else { throw TestFailure("no resubscription") }
            #expect(after.bootId == bootId)
            // Resubscribed with `since` and the old boot id: the daemon answers with a lagged.
            guard case .lagged = try await next(&events) else { throw TestFailure("no lagged after the restart") }

            _ = try await client.call("config.set", ["deviceClass": "after"])
            let event = try await nextEvent(&events)
            #expect(event.bootId == bootId && event.data["deviceClass"] == "after")
            _ = second
        }
    }

    @Test func aConsumerThatFallsBehindGetsLaggedWhereTheEventsWereLost() async throws {
        let daemon = try await DaemonProcess()
        try await withDeadline {
            let client = try await InteractiveClient.connect(
                path: daemon.socketPath, options: .init(eventBufferCapacity: 2))
            let other = try await InteractiveClient.connect(path: daemon.socketPath)
            var events = client.events(types: ["config."]).makeAsyncIterator()
            _ = try await next(&events)
            for value in ["a", "b", "c", "d", "e"] { _ = try await other.call("config.set", ["deviceClass": .string(value)]) }
            // Replies on one connection come in order: once this returns, the five events arrived.
            _ = try await client.status()
            _ = try await other.call("config.set", ["deviceClass": "f"])
            _ = try await client.status()

            #expect(try await nextEvent(&events).data["deviceClass"] == "a")
            #expect(try await nextEvent(&events).data["deviceClass"] == "b")
            guard case .lagged(let missed) = try await next(&events) else { throw TestFailure("no lagged") }
            #expect(missed == 4)
            _ = try await other.call("config.set", ["deviceClass": "g"])
            #expect(try await nextEvent(&events).data["deviceClass"] == "g")
        }
    }

    @Test func aQuizIsAnsweredFromOverlayShowToAnswerResult() async throws {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags())
        try await withDeadline(seconds: 40) {
            let client = try await InteractiveClient.connect(path: daemon.socketPath)
            _ = try await client.login(token: "token-alice", userId: "alice", displayName: "Alice")
            #expect(try await client.join(mediaId: "m1").state == "joined")
            var events = client.events(types: ["overlay.", "answer."]).makeAsyncIterator()
            _ = try await next(&events)
            try await backend.emitOverlay(room: "m1", backend.quiz("tl-swift"))

            let show = try #require(OverlayShow(data: try await nextEvent(&events, type: EventType.overlayShow).data))
            #expect(show.placement.frame(in: .init(x: 0, y: 0, width: 1000, height: 1000)) == .init(x: 300, y: 350, width: 400, height: 300))
            try await client.overlayAttached(show.overlayId)
            #expect(try await client.overlayRendered(show.overlayId, loaded: true))
            // What the template posts, as the text it passed to IOS.postMessage.
            _ = try await client.overlayBridge(show.overlayId, posted: #"{"type":"INTERACTIVE_SHOW_ANALYTICS","data":{}}"#)
            #expect(try await nextEvent(&events, type: EventType.overlayReveal).data["overlayId"] == .string(show.overlayId))
            let bridged = try await client.overlayBridge(
                show.overlayId, posted: #"{"type":"INTERACTIVE_ACTION_REPORT","data":{"answer":{"choice":"A"}}}"#)
            #expect(bridged.action == "answer")
            let result = try await nextEvent(&events, type: EventType.answerResult)
            #expect(result.data["status"] == "success")
            let action = try await #require(try backend.waitForRecords("actions") { !$0.isEmpty }.first)
            #expect(action["body"]?["answer"] == ["answer": ["choice": "A"]])
        }
    }
}

// MARK: Helpers

/// Runs `body`, cancelled after `seconds` (the event stream then ends, and the test fails).
private func withDeadline(seconds: Int = 20, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Bool.self) { group in
        group.addTask {
            try await body()
            return true
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return false
        }
        let finished = try await group.next() ?? false
        group.cancelAll()
        if !finished { throw TestFailure("the test did not finish within \(seconds) s") }
    }
}

/// The next element; the stream must not end.
private func next(_ events: inout InteractiveEvents.AsyncIterator) async throws -> ClientEvent {
    guard let element = try await events.next() else { throw TestFailure("the event stream ended") }
    return element
}

/// The next daemon event (of `type` if given, skipping others).
private func nextEvent(_ events: inout InteractiveEvents.AsyncIterator, type: String? = nil) async throws -> EventEnvelope {
    while true {
        let element = try await next(&events)
        guard case .event(let envelope) = element else { throw TestFailure("expected an event, got \(element)") }
        if type == nil || envelope.type == type { return envelope }
    }
}

/// The daemon error `body` throws.
private func rpcError(_ body: () async throws -> Void) async throws -> RPCError {
    do {
        try await body()
    } catch IPCClientError.rpc(let error) {
        return error
    }
    throw TestFailure("no daemon error")
}
