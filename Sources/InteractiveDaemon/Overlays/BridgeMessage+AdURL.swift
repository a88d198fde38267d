import IPCProtocol

extension BridgeMessage {
    /// For an action report that is an ad click (`action: CLICK_ADS`), the URL to open.
    var adURL: String? {
        guard kind == .actionReport, data["action"]?.stringValue == "CLICK_ADS" else { return nil }
        return data["url"]?.stringValue.flatMap { PlayerURL.isLoadable($0) ? $0 : nil }
    }
}
