/// The messages between the daemon's voice manager and the media process `interactived-voice`
/// (protocol version 1: docs/voice.md, "The media process"). One JSON object a line, each with a
/// `type`; `VoiceMediaLineDecoder` and `VoiceMediaLine` carry them over the socket pair.

/// What the media process is asked to run: sent once, first.
public struct MediaStart: Sendable, Equatable {
    /// The microphone: a GStreamer pipeline fragment (`autoaudiosrc`, `audiotestsrc is-live=true`).
    public var source: String
    /// The speaker: a GStreamer pipeline fragment (`autoaudiosink`, `fakesink`).
    public var sink: String
    /// Cancel the echo of the speaker with `webrtcdsp`/`webrtcechoprobe` when they exist.
    public var echoCancel: Bool
    /// STUN/TURN server URLs; empty: host candidates only. TURN URLs may hold credentials: never log them.
    public var ice: [String]
    /// Start with the microphone closed.
    public var muted: Bool

    public init(source: String, sink: String, echoCancel: Bool, ice: [String], muted: Bool) {
        self.source = source
        self.sink = sink
        self.echoCancel = echoCancel
        self.ice = ice
        self.muted = muted
    }
}

/// An ICE candidate trickled either way, or the end of them.
public enum TrickledCandidate: Sendable, Equatable {
    /// `candidate` is the `candidate:...` attribute without `a=`; `mlineIndex` its m-line.
    case candidate(mlineIndex: Int, candidate: String)
    /// The side that sends it has no more candidates.
    case completed
}

/// ICE connection states, as webrtcbin and the W3C name them.
public enum ICEConnectionState: String, Sendable, Equatable, CaseIterable {
    case new, checking, connected, completed, failed, disconnected, closed
}

/// Daemon -> media process.
public enum DaemonMessage: Sendable, Equatable {
    /// Build the pipeline and make an offer.
    case start(MediaStart)
    /// The voice server's SDP answer.
    case answer(sdp: String)
    /// A remote candidate, or the end of them.
    case candidate(TrickledCandidate)
    /// Close (true) or open (false) the valve before the encoder.
    case mute(Bool)
    /// Tear down and exit 0.
    case stop
}

/// Media process -> daemon.
public enum MediaMessage: Sendable, Equatable {
    /// The pipeline is built and playing (an `offer` follows); `elements` says which optional
    /// elements were found (`webrtcdsp`).
    case ready(elements: [String: Bool])
    /// The local SDP offer.
    case offer(sdp: String)
    /// A local candidate, or the end of gathering.
    case candidate(TrickledCandidate)
    /// The ICE state changed; `connection` is webrtcbin's peer-connection state when known.
    case state(ice: ICEConnectionState, connection: String?)
    /// This box's microphone started or stopped talking; `level` in -dBov (0 loudest, 127 silence).
    case talking(Bool, level: Int)
    /// The pipeline cannot run; the process exits with status 69.
    case unavailable(reason: String)
    /// A fatal runtime error; the process exits with status 1.
    case error(message: String)
}
