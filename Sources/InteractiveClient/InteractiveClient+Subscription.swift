import IPCProtocol
import JSONValue

/// The event stream's side of the client: one subscription per client (the daemon keeps one
/// per connection), its buffer, and the consumer waiting for the next item.
struct ActiveSubscription {
    let token: Int
    var buffer: EventBuffer
    /// Whether the current connection carries the subscription; false once it dropped, until
    /// the stream subscribes again.
    var connected = false
    var waiter: CheckedContinuation<SubscriptionDelivery, Never>?
}

/// What the stream's consumer gets next.
enum SubscriptionDelivery: Sendable {
    case item(EventBuffer.Item)
    /// The connection carrying the subscription dropped (its buffered items were delivered), or
    /// the subscription was replaced or the client closed.
    case ended
}

extension InteractiveClient {
    /// Returns an `AsyncSequence` of the daemon's events of `types` (prefixes such as
    /// `"overlay."`; nil for all), from the event after `since` if given. It starts with
    /// `.subscribed` (the snapshot), reconnects and resubscribes with the last seq seen after the
    /// connection drops, and yields `.lagged` and `.restarted` where they happen. One stream per
    /// client: starting another one ends the previous one.
    public nonisolated func events(types: [String]? = nil, since: Int? = nil) -> InteractiveEvents {
        InteractiveEvents(client: self, types: types, since: since)
    }

    /// A token for a new stream, which replaces the previous one.
    func makeSubscriptionToken() -> Int {
        latestSubscriptionToken += 1
        return latestSubscriptionToken
    }

    /// Whether the stream of `token` is still this client's stream.
    func isCurrent(_ token: Int) -> Bool {
        !isClosed && token == latestSubscriptionToken
    }

    /// Subscribes the current connection (connecting first if needed) for the stream of `token`,
    /// replacing another stream's subscription.
    func subscribe(token: Int, types: [String]?, since: Int?, bootId: String?) async throws -> SubscribeResult {
        if subscription?.token != token {
            endSubscription()
            subscription = ActiveSubscription(token: token, buffer: EventBuffer(capacity: options.eventBufferCapacity))
        }
        // Connect now so that the subscription is marked on the connection the request goes on
        // (`call` sends it before it suspends).
        try openConnection()
        subscription?.connected = true
        return try await call(EventsSubscribeParams(types: types, since: since, bootId: bootId))
    }

    /// The next item of the stream of `token`, waiting for one if none is buffered.
    func nextDelivery(token: Int) async -> SubscriptionDelivery {
        guard var current = subscription, current.token == token else { return .ended }
        if let item = current.buffer.pop() {
            subscription = current
            return .item(item)
        }
        guard current.connected, !isClosed, !Task.isCancelled else { return .ended }
        let executor = self.executor
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                subscription?.waiter = continuation
            }
        } onCancel: {
            executor.queue.async { [weak self] in self?.assumeIsolated { $0.wake(token) } }
        }
    }

    /// The stream of `token` stops (its consumer went away): the daemon is told, best effort,
    /// when the connection still carries the subscription.
    func finish(token: Int) async {
        guard let current = subscription, current.token == token else { return }
        endSubscription()
        if current.connected { _ = try? await call(IPCMethod.eventsUnsubscribe) }
    }

    /// An event arrived on the connection.
    func deliver(_ envelope: EventEnvelope) {
        guard var current = subscription else { return }
        current.buffer.push(envelope)
        if let waiter = current.waiter, let item = current.buffer.pop() {
            current.waiter = nil
            waiter.resume(returning: .item(item))
        }
        subscription = current
    }

    func subscriptionConnectionLost() {
        subscription?.connected = false
        if let waiter = subscription?.waiter {
            subscription?.waiter = nil
            waiter.resume(returning: .ended)
        }
    }

    func endSubscription() {
        subscription?.waiter?.resume(returning: .ended)
        subscription = nil
    }

    private func wake(_ token: Int) {
        guard subscription?.token == token, let waiter = subscription?.waiter else { return }
        subscription?.waiter = nil
        waiter.resume(returning: .ended)
    }
}
