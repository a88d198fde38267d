/// The local API's version, returned by `daemon.hello`.
public let ipcProtocolVersion = 1

/// Method names of protocol 1.
public enum IPCMethod: String, Sendable, CaseIterable {
    case daemonHello = "daemon.hello"
    case daemonStatus = "daemon.status"
    case daemonReload = "daemon.reload"
    case configGet = "config.get"
    case configSet = "config.set"
    case sessionLogin = "session.login"
    case sessionLogout = "session.logout"
    case roomJoin = "room.join"
    case roomLeave = "room.leave"
    case playerTime = "player.time"
    case playerState = "player.state"
    case playerViewport = "player.viewport"
    case overlayAttached = "overlay.attached"
    case overlayRendered = "overlay.rendered"
    case overlayBridge = "overlay.bridge"
    case overlayDismiss = "overlay.dismiss"
    case answerConfirm = "answer.confirm"
    case predictOpen = "predict.open"
    case eventsSubscribe = "events.subscribe"
    case eventsUnsubscribe = "events.unsubscribe"
    case interactiveStatus = "interactive.status"
    case leaderboardURL = "leaderboard.url"
    case playbackStart = "playback.start"
    case playbackError = "playback.error"
    case playbackForeground = "playback.foreground"
    case playbackStop = "playback.stop"
    case voiceJoin = "voice.join"
    case voiceLeave = "voice.leave"
    case voiceMute = "voice.mute"

    /// Methods any local user may call; everything else needs the control role.
    public var isObserverAllowed: Bool {
        switch self {
        case .daemonHello, .daemonStatus, .configGet, .eventsSubscribe, .eventsUnsubscribe, .leaderboardURL:
            return true
        default:
            return false
        }
    }
}
