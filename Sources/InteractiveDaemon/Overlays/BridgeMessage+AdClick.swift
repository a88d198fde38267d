import IPCProtocol

/// A viewer's click on an ad in a template: never an answer (BACKEND.md, Answer flow).
enum AdClick: Sendable, Equatable {
    /// Give the players `overlay.link`; `loadable`: a web view may open it (`http`/`https`,
    /// `PlayerURL`), else it is for showing (a QR code of an `intent://` or `market://` link).
    case link(url: String, loadable: Bool)
    /// No URL a player could use (missing, over `PlayerURL.maxLength`, not `scheme://…`, white
    /// space or control characters): logged and dropped.
    case unusable(reason: String)
}

extension BridgeMessage {
    /// For an action report that is an ad click (`data.action` is `CLICK_ADS`, whatever its
    /// `url`), what to do with it; nil for any other message.
    var adClick: AdClick? {
        guard kind == .actionReport, data["action"]?.stringValue == "CLICK_ADS" else { return nil }
        guard let url = data["url"]?.stringValue else { return .unusable(reason: "no url") }
        if PlayerURL.isLoadable(url) { return .link(url: url, loadable: true) }
        guard url.utf8.count <= PlayerURL.maxLength else { return .unusable(reason: "a url of \(url.utf8.count) bytes") }
        guard EndpointURL(url) != nil else { return .unusable(reason: "a url that is not scheme://…") }
        return .link(url: url, loadable: false)
    }
}
