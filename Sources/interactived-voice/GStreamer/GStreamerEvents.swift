import CGStreamer
import CGStreamerShims
import Runtime
import VoiceMediaProtocol

/// What GStreamer's own threads (webrtcbin's, the streaming threads, the bus's sync handler) may
/// do with the media process: post a `MediaSession.Input` to its mailbox, nothing else.
///
/// Every C callback the media process registers gets this object as its user data and nothing
/// more: it holds no pipeline, so a callback cannot touch the pipeline or the session off the
/// process's actor; the actor reads the mailbox and acts there.
final class GStreamerEvents: Sendable {
    private let mailbox: Mailbox<MediaSession.Input>

    init(mailbox: Mailbox<MediaSession.Input>) {
        self.mailbox = mailbox
    }

    func post(_ input: MediaSession.Input) {
        mailbox.send(input)
    }

    /// A new reference for a C callback's user data, released by `releaseUserData`.
    func retainedUserData() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    fileprivate static func from(_ userData: UnsafeMutableRawPointer?) -> GStreamerEvents? {
        userData.map { Unmanaged<GStreamerEvents>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// The C callbacks: each reads what GStreamer handed it and posts it.
enum GStreamerCallbacks {
    private typealias ElementHandler = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    private typealias CandidateHandler = @convention(c) (UnsafeMutableRawPointer?, guint, UnsafeMutablePointer<gchar>?, UnsafeMutableRawPointer?) -> Void
    private typealias NotifyHandler = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GParamSpec>?, UnsafeMutableRawPointer?) -> Void

    private static let releaseUserData: GClosureNotify = { userData, _ in
        if let userData { Unmanaged<GStreamerEvents>.fromOpaque(userData).release() }
    }

    /// webrtcbin's `on-negotiation-needed`, `on-ice-candidate` and the state notifications.
    static func connect(webrtc: UnsafeMutableRawPointer, to events: GStreamerEvents) {
        let negotiationNeeded: ElementHandler = { _, userData in
            GStreamerEvents.from(userData)?.post(.negotiationNeeded)
        }
        let candidate: CandidateHandler = { _, mlineIndex, candidate, userData in
            guard let candidate else { return }
            GStreamerEvents.from(userData)?.post(.localCandidate(mlineIndex: Int(mlineIndex), candidate: String(cString: candidate)))
        }
        let stateChanged: NotifyHandler = { object, spec, userData in
            guard let object, let spec, let events = GStreamerEvents.from(userData) else { return }
            let property = String(cString: g_param_spec_get_name(spec))
            guard let nick = GObjectAccess.enumNick(object, property) else { return }
            switch property {
            case "ice-connection-state":
                // webrtcbin's nicks are the protocol's names.
                if let state = ICEConnectionState(rawValue: nick) { events.post(.iceState(state)) }
            case "connection-state":
                events.post(.connectionState(nick))
            case "ice-gathering-state":
                if nick == "complete" { events.post(.gatheringComplete) }
            default:
                break
            }
        }
        connect(webrtc, "on-negotiation-needed", unsafeBitCast(negotiationNeeded, to: GCallback.self), events)
        connect(webrtc, "on-ice-candidate", unsafeBitCast(candidate, to: GCallback.self), events)
        for property in ["ice-connection-state", "connection-state", "ice-gathering-state"] {
            connect(webrtc, "notify::\(property)", unsafeBitCast(stateChanged, to: GCallback.self), events)
        }
    }

    private static func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback, _ events: GStreamerEvents) {
        g_signal_connect_data(instance, signal, handler, events.retainedUserData(), releaseUserData, GConnectFlags(rawValue: 0))
    }

    /// The bus's sync handler: errors, warnings and the microphone meter's `level` messages are
    /// posted; every message is dropped from the bus (nobody pops it).
    static func watch(bus: UnsafeMutablePointer<GstBus>, to events: GStreamerEvents) {
        let handler: GstBusSyncHandler = { _, message, userData in
            guard let message, let events = GStreamerEvents.from(userData) else { return GST_BUS_DROP }
            switch message.pointee.type {
            case GST_MESSAGE_ERROR:
                events.post(.pipelineError(BusMessage.errorText(message)))
            case GST_MESSAGE_ELEMENT:
                if let (rms, time) = BusMessage.level(message) { events.post(.level(rmsDecibels: rms, at: time)) }
            default:
                break
            }
            return GST_BUS_DROP
        }
        gst_bus_set_sync_handler(bus, handler, events.retainedUserData(), { userData in
            if let userData { Unmanaged<GStreamerEvents>.fromOpaque(userData).release() }
        })
    }

    /// A promise whose reply is posted as `reply(structure)` (nil: no reply, or an empty one).
    static func promise(_ events: GStreamerEvents, _ reply: @escaping @Sendable (PromiseReply) -> MediaSession.Input?) -> UnsafeMutablePointer<GstPromise> {
        let context = PromiseContext(events: events, reply: reply)
        return gst_promise_new_with_change_func({ promise, userData in
            guard let promise, let userData else { return }
            let context = Unmanaged<PromiseContext>.fromOpaque(userData).takeUnretainedValue()
            let reply = PromiseReply(promise)
            if let input = context.reply(reply) { context.events.post(input) }
        }, Unmanaged.passRetained(context).toOpaque(), { userData in
            if let userData { Unmanaged<PromiseContext>.fromOpaque(userData).release() }
        })
    }

    private final class PromiseContext: Sendable {
        let events: GStreamerEvents
        let reply: @Sendable (PromiseReply) -> MediaSession.Input?
        init(events: GStreamerEvents, reply: @escaping @Sendable (PromiseReply) -> MediaSession.Input?) {
            self.events = events
            self.reply = reply
        }
    }
}

/// What a webrtcbin promise answered, read on the thread that answered it.
struct PromiseReply: Sendable {
    /// The SDP text of the reply's `offer` or `answer`, when it has one.
    let sdp: String?
    /// The reply's `error`, or why there is no reply.
    let error: String?

    init(_ promise: UnsafeMutablePointer<GstPromise>) {
        guard gst_promise_wait(promise) == GST_PROMISE_RESULT_REPLIED else {
            sdp = nil
            error = "the promise was interrupted"
            return
        }
        guard let structure = gst_promise_get_reply(promise) else {
            sdp = nil
            error = nil
            return
        }
        var text: String?
        for field in ["offer", "answer"] {
            if let value = gst_structure_get_value(structure, field), let boxed = g_value_get_boxed(value) {
                let description = boxed.assumingMemoryBound(to: GstWebRTCSessionDescription.self)
                if let sdp = description.pointee.sdp, let raw = gst_sdp_message_as_text(sdp) {
                    text = String(cString: raw)
                    g_free(raw)
                }
            }
        }
        sdp = text
        if let value = gst_structure_get_value(structure, "error"), let boxed = g_value_get_boxed(value) {
            let gerror = boxed.assumingMemoryBound(to: GError.self)
            error = gerror.pointee.message.map { String(cString: $0) } ?? "unknown error"
        } else {
            error = nil
        }
    }
}

/// Reads the bus messages the media process acts on.
enum BusMessage {
    /// "<element>: <message> (<the debug text's last line>)" of an error message: the last line
    /// says why, where the message is generic ("Internal data stream error.").
    static func errorText(_ message: UnsafeMutablePointer<GstMessage>) -> String {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(message, &gerror, &debug)
        defer {
            if let gerror { g_error_free(gerror) }
            g_free(debug)
        }
        let source = cgst_message_source_name(message).map { String(cString: $0) } ?? "pipeline"
        let text = gerror?.pointee.message.map { String(cString: $0) } ?? "unknown error"
        let detail = debug.map { String(cString: $0) }?.split(separator: "\n").last.map(String.init)
        return "\(source): \(text)" + (detail.map { " (\($0))" } ?? "")
    }

    /// A `level` element message's loudest RMS and its running time.
    static func level(_ message: UnsafeMutablePointer<GstMessage>) -> (Double, Duration)? {
        guard let structure = gst_message_get_structure(message), gst_structure_has_name(structure, "level") != 0 else { return nil }
        var rms = 0.0
        guard cgst_level_message_rms(structure, &rms) != 0 else { return nil }
        var runningTime: guint64 = 0
        guard gst_structure_get_uint64(structure, "running-time", &runningTime) != 0 else { return nil }
        return (rms, .nanoseconds(Int64(clamping: runningTime)))
    }
}
