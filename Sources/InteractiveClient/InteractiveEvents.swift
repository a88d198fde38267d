import IPCProtocol

/// The daemon's events as an `AsyncSequence` (`InteractiveClient.events(types:since:)`).
///
/// The iterator subscribes on first use. When the connection drops it reconnects with the
/// client's `ReconnectPolicy` and resubscribes from the last event it saw (`since` and the
/// `bootId` it belongs to), so nothing the daemon still holds is lost. It ends (nil) when the
/// client is closed, another stream replaces it or its task is cancelled, and throws a daemon
/// error (bad `types`) or the last connection error once `maxAttempts` is exhausted.
public struct InteractiveEvents: AsyncSequence, Sendable {
    public typealias Element = ClientEvent

    let client: InteractiveClient
    let types: [String]?
    let since: Int?

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(client: client, types: types, tracker: SubscriptionTracker(since: since))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        private let client: InteractiveClient
        private let types: [String]?
        private var tracker: SubscriptionTracker
        private var token: Int?
        private var ready: [ClientEvent] = []
        /// Whether the current connection carries this stream's subscription.
        private var subscribed = false
        private var failures = 0

        init(client: InteractiveClient, types: [String]?, tracker: SubscriptionTracker) {
            self.client = client
            self.types = types
            self.tracker = tracker
        }

        public mutating func next() async throws -> ClientEvent? {
            let token = await currentToken()
            while true {
                if !ready.isEmpty { return ready.removeFirst() }
                if subscribed {
                    switch await client.nextDelivery(token: token) {
                    case .item(.event(let envelope)):
                        return tracker.received(envelope)
                    case .item(.lagged(let missed)):
                        return .lagged(missed: missed)
                    case .ended:
                        subscribed = false
                    }
                }
                guard !Task.isCancelled, await client.isCurrent(token) else {
                    await client.finish(token: token)
                    return nil
                }
                do {
                    let reply = try await client.subscribe(token: token, types: types, since: tracker.lastSeq,
                                                           bootId: tracker.bootId)
                    ready.append(contentsOf: tracker.subscribed(reply))
                    subscribed = true
                    failures = 0
                } catch let error as IPCClientError where error.isConnectionProblem {
                    failures += 1
                    guard let delay = client.options.reconnect.delay(afterFailures: failures) else { throw error }
                    do {
                        try await Task.sleep(for: delay)
                    } catch {
                        await client.finish(token: token)
                        return nil
                    }
                }
            }
        }

        private mutating func currentToken() async -> Int {
            if let token { return token }
            let made = await client.makeSubscriptionToken()
            token = made
            return made
        }
    }
}

extension IPCClientError {
    /// A failure that reconnecting may cure (no daemon yet, a dropped or silent connection).
    var isConnectionProblem: Bool {
        switch self {
        case .unreachable, .connectionClosed, .timeout: return true
        case .rpc, .protocolViolation: return false
        }
    }
}
