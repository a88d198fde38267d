import IPCProtocol
import JSONValue

/// The orchestrator: owns the viewer session and the room, and routes backend events to the
/// overlay and predict managers.
actor RoomController {
    private let bus: EventBus
    private let log: Logger
    private(set) var session = ViewerSession.anonymous

    init(bus: EventBus, log: Logger) async {
        self.bus = bus
        self.log = log
        await bus.setStatus("session", session.publicState)
        await bus.setStatus("room", .null)
        await bus.setStatus("overlays", .array([]))
        await bus.setStatus("connection", ["state": "idle", "attempt": 0, "retryInMs": nil, "error": nil])
    }

    /// `session.login`: a live room reconnects so that the socket carries the new token.
    func login(token: String, userId: String, displayName: String?) async -> JSONValue {
        session = ViewerSession(token: token, userId: userId, displayName: displayName)
        log.info("Viewer logged in", ["INTERACTIVE_USER_ID": userId])
        await bus.publish(EventType.sessionState, session.publicState, section: "session", status: session.publicState)
        return session.publicState
    }

    /// `session.logout`: back to an anonymous viewer.
    func logout() async -> JSONValue {
        let previous = session.userId
        session = .anonymous
        log.info("Viewer logged out", previous.map { ["INTERACTIVE_USER_ID": $0] } ?? [:])
        await bus.publish(EventType.sessionState, session.publicState, section: "session", status: session.publicState)
        return session.publicState
    }
}
