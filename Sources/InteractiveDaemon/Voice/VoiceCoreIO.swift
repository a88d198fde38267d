import IPCProtocol
import JSONValue
import VoiceMediaProtocol

/// A local request the voice core answers, maybe later (`voice.join` waits for the room).
struct VoiceRequestID: Sendable, Hashable {
    let value: Int
}

/// One WebSocket to the voice server, numbered by the core: what a closed one still reports is
/// told apart from the current one's.
struct VoiceSocketID: Sendable, Hashable, CustomStringConvertible {
    let value: Int
    var description: String { "socket \(value)" }
}

/// One media process (`interactived-voice`), numbered by the core.
struct VoiceMediaID: Sendable, Hashable, CustomStringConvertible {
    let value: Int
    var description: String { "media process \(value)" }
}

/// The core's timers. Scheduling one replaces the same timer scheduled before.
enum VoiceTimer: Sendable, Hashable {
    /// The next connection attempt to the voice server.
    case reconnect
    /// The next session keepalive.
    case keepalive
    /// `voice.join`'s `timeoutMs` for this request.
    case joinReply(VoiceRequestID)
}

/// What the voice core is told, with the time it happens (`VoiceCore.handle(_:now:)`).
enum VoiceInput: Sendable, Equatable {
    /// `voice.join`, checked (`VoiceJoinParams`).
    case join(VoiceJoinParams, VoiceRequestID)
    case leave(VoiceRequestID)
    case mute(Bool, VoiceRequestID)
    /// The configuration changed; it applies from the next connection and the next join.
    case settings(VoiceSettings)
    /// The viewer's `displayName` (nil when logged out): the default `display` of later joins.
    case viewerDisplayName(String?)
    /// The WebSocket (`janus-protocol`) is open.
    case socketOpened(VoiceSocketID)
    /// It could not be opened, or it closed (also after a `closeSocket`).
    case socketClosed(VoiceSocketID, reason: String)
    /// A text message from the voice server.
    case janusReceived(VoiceSocketID, String)
    /// The media process runs; its control socket is ready for `start`.
    case mediaStarted(VoiceMediaID)
    /// A message from the media process.
    case media(VoiceMediaID, MediaMessage)
    /// The media process ended (also after a `stopMedia`).
    case mediaExited(VoiceMediaID, MediaExit)
    case timerFired(VoiceTimer)
}

/// What the voice core asks its shell to do, in order.
enum VoiceEffect: Sendable, Equatable {
    /// Open a WebSocket to `url` with the subprotocol `janus-protocol` (`VoiceCore.subprotocol`)
    /// and report `socketOpened` or `socketClosed`.
    case openSocket(VoiceSocketID, url: String)
    /// Close it (any messages sent before go first); `socketClosed` follows.
    case closeSocket(VoiceSocketID)
    /// Send `JanusRequest.text` as one text message.
    case sendJanus(VoiceSocketID, JanusRequest)
    /// Start `interactived-voice --control-fd 3` on a socket pair and report `mediaStarted` (or
    /// `mediaExited(.notStarted)`).
    case startMedia(VoiceMediaID)
    /// Write one message on its control socket (never `stop`: `stopMedia` sends it).
    case sendMedia(VoiceMediaID, DaemonMessage)
    /// Send `stop`, close its control socket, and end it if it lingers (SIGTERM after 2 s).
    case stopMedia(VoiceMediaID)
    /// Publish `voice.state`.
    case state(VoiceStateEvent)
    /// Publish `voice.peer`.
    case peer(VoicePeerEvent)
    /// Publish `voice.talking`.
    case talking(VoiceTalkingEvent)
    /// Answer a request.
    case reply(VoiceRequestID, Result<JSONValue, RPCError>)
    /// Fire `timer` at `at` (replacing the same timer).
    case schedule(VoiceTimer, at: ContinuousClock.Instant)
    case cancel(VoiceTimer)
    case log(VoiceLogLine)
}
