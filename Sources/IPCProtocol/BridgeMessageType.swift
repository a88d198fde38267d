/// The `type` of what an overlay's web template posts through the `IOS` bridge
/// (`{type, data}`), which the player forwards as `overlay.bridge`.
public enum BridgeMessageType: String, Sendable, CaseIterable {
    /// The template is ready: reveal it (`overlay.reveal`).
    case show = "INTERACTIVE_SHOW_ANALYTICS"
    /// The template closed itself (`overlay.hide` `interactive_hide`).
    case hide = "INTERACTIVE_HIDE_ANALYTICS"
    /// The viewer answered (`data` is the answer), or clicked an ad (`data.action` `CLICK_ADS`).
    case actionReport = "INTERACTIVE_ACTION_REPORT"
    /// A predict/lucky dialog is open (like `show`).
    case open = "INTERACTIVE_OPEN_ANALYTICS"
    /// A predict/lucky dialog closed (like `hide`).
    case close = "INTERACTIVE_CLOSE_ANALYTICS"
    /// Ignored.
    case ping = "INTERACTIVE_PING_ANALYTICS"
}
