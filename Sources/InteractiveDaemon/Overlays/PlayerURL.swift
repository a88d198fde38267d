/// The rule for URLs the daemon hands to players to load or open (overlay templates, button
/// images, ad links): `http` or `https` only, at most `maxLength` bytes, no white space or
/// control characters. A backend cannot make a player open `file:`, `javascript:`, `data:` or
/// `chrome:` pages.
enum PlayerURL {
    static let maxLength = 4096

    static func isLoadable(_ text: String) -> Bool {
        guard text.utf8.count <= maxLength, let url = EndpointURL(text) else { return false }
        return url.scheme == "http" || url.scheme == "https"
    }
}
