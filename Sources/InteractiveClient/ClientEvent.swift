import IPCProtocol

/// What an event stream (`InteractiveClient.events(types:since:)`) yields.
public enum ClientEvent: Sendable, Equatable {
    /// A subscription took effect: `snapshot` is the daemon's whole state now (draw what it
    /// says is on screen) and `seq` the last event it covers. The first element, and again
    /// after every reconnection.
    case subscribed(SubscribeResult)
    /// A daemon event. Under a `types` filter, `seq` skips the events of other types: that is
    /// not a loss.
    case event(EventEnvelope)
    /// Events were lost at this point (`events.lagged` from the daemon, or more than the
    /// client's buffer held): resynchronise with `status()`. After a restart it follows the new
    /// `subscribed`, whose snapshot already covers the loss.
    case lagged(missed: Int)
    /// The daemon restarted (its boot id changed): its overlays are gone (it logs the viewer in and
    /// joins the room again by itself; see docs/ipc.md, "Restarts"). Drop your overlay views; a
    /// `subscribed` with the new boot's snapshot follows.
    case restarted(previousBootId: String, bootId: String)
}
