import IPCProtocol

/// Who is watching: a logged-in viewer (with the token the backend gave them) or anonymous.
struct ViewerSession: Sendable, Equatable {
    /// The bearer token. Secret: never logged, never in status or events.
    var token: String?
    var userId: String?
    var displayName: String?
    /// The backend refused `token` (401/403, or a refused CONNECT): the viewer must log in again.
    var expired = false

    static let anonymous = ViewerSession(token: nil, userId: nil, displayName: nil)

    var isLoggedIn: Bool { token != nil }

    /// The public view of the session (`session.state` and the status board); observers get
    /// its `observed` form.
    var publicState: SessionState {
        SessionState(loggedIn: isLoggedIn, userId: userId, displayName: displayName, expired: expired)
    }

    /// The bucket that answered timelines are kept under.
    var answeredBucket: String { userId.map { "user:\($0)" } ?? "anonymous" }
}
