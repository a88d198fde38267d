import CGStreamer
import CGStreamerShims
import VoiceMediaProtocol

/// The GStreamer pipeline of one join: the microphone through Opus to webrtcbin, and what
/// webrtcbin receives to the speaker.
///
///     <source> ! audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=48000,channels=1
///       [! webrtcdsp] ! level ! valve ! opusenc ! rtpopuspay ! <rtpCaps> ! webrtcbin
///     webrtcbin. ! rtpopusdepay ! opusdec ! audioconvert ! audioresample
///       [! webrtcechoprobe ! audioconvert ! audioresample] ! <sink>
///
/// `level` measures the microphone for the talking detector and puts a GstAudioLevelMeta on each
/// buffer; the payloader's RFC 6464 header extension (made from the caps' extmap) writes that
/// meta's level into every RTP packet, which is how Janus sees this box talk. The valve, closed
/// when muted, drops every buffer before the encoder: nothing leaves the box.
///
/// Owned by `MediaProcess` (not `Sendable`): every call happens on its actor. GStreamer's threads
/// reach the process only through `GStreamerEvents`.
final class VoicePipeline {
    /// Why the pipeline cannot run, for the `unavailable` message.
    struct Unavailable: Error, Equatable {
        let reason: String
    }

    /// The RTP caps of the sent audio, on the payloader's output and as webrtcbin's codec
    /// preferences (what the offer says):
    /// - `encoding-params=2`: Janus refuses Opus without the `/2` of WebRTC's rtpmap;
    /// - the SSRC: webrtcbin 1.22 writes the offer's `a=ssrc` only from the caps' `ssrc` (else it
    ///   warns "missing ssrc"), and Janus drops the packets of an SSRC it was not told. Chosen here
    ///   and given to the payloader too, rather than learnt from the first buffer's caps, so that
    ///   an offer made before any audio flowed (or while muted) has it;
    /// - the MID extension (BUNDLE's demultiplexing; the protocol offers it);
    /// - the RFC 6464 audio-level extension, for Janus' `talking` events. Its value is an array
    ///   (direction, URI, attributes) because that is how the payloader writes it back in the caps
    ///   it sets; MID's, without attributes, is a plain string for the same reason.
    static func rtpCaps(ssrc: UInt32) -> String {
        "application/x-rtp,media=(string)audio,encoding-name=(string)OPUS,clock-rate=(int)48000,"
            + "payload=(int)96,encoding-params=(string)2,ssrc=(uint)\(ssrc),"
            + "extmap-1=(string)urn:ietf:params:rtp-hdrext:sdes:mid,"
            + "extmap-2=(GstValueArray)<(string)\"\",(string)urn:ietf:params:rtp-hdrext:ssrc-audio-level,(string)\"vad=on\">"
    }

    /// The interval of the microphone's level measurements (100 ms).
    static let levelIntervalNanoseconds: UInt64 = 100_000_000
    /// webrtcdsp finds its probe on the speaker's side by name.
    static let echoProbeName = "echo-probe"

    private let pipeline: UnsafeMutablePointer<GstElement>
    private let webrtc: UnsafeMutablePointer<GstElement>
    private let valve: UnsafeMutablePointer<GstElement>
    private let receiver: UnsafeMutablePointer<GstElement>
    private let events: GStreamerEvents
    /// The optional elements found (`webrtcdsp`), for `ready`.
    let elements: [String: Bool]
    private var stopped = false

    private init(pipeline: UnsafeMutablePointer<GstElement>, webrtc: UnsafeMutablePointer<GstElement>,
                 valve: UnsafeMutablePointer<GstElement>, receiver: UnsafeMutablePointer<GstElement>,
                 events: GStreamerEvents, elements: [String: Bool]) {
        self.pipeline = pipeline
        self.webrtc = webrtc
        self.valve = valve
        self.receiver = receiver
        self.events = events
        self.elements = elements
    }

    deinit { stop() }

    /// Builds the pipeline for `start` and sets it playing.
    static func start(_ start: MediaStart, events: GStreamerEvents, log: (String) -> Void) throws(Unavailable) -> VoicePipeline {
        if let missing = ElementFactory.requiredElements.first(where: { !ElementFactory.exists($0) }) {
            throw Unavailable(reason: "missing element \(missing)")
        }
        let echoFound = ElementFactory.exists("webrtcdsp") && ElementFactory.exists("webrtcechoprobe")
        let echoCancel = start.echoCancel && echoFound
        if start.echoCancel && !echoFound { log("echo cancellation asked for, but webrtcdsp is missing: going without it") }
        let builder = try PipelineBuilder()

        // The microphone, to webrtcbin.
        let source = try builder.fragment(start.source, role: "source", pad: "src")
        let converter = try builder.make("audioconvert")
        guard gst_element_link(source, converter) != 0 else { throw Unavailable(reason: "source pipeline refused: its output is not raw audio") }
        var sending = [converter, try builder.make("audioresample"),
                       try builder.capsFilter("audio/x-raw,format=(string)S16LE,rate=(int)48000,channels=(int)1")]
        if echoCancel {
            let canceller = try builder.make("webrtcdsp")
            GObjectAccess.set(canceller, "probe", .string(echoProbeName))
            sending.append(canceller)
        }
        let meter = try builder.make("level", name: "meter")
        GObjectAccess.set(meter, "audio-level-meta", .bool(true))
        GObjectAccess.set(meter, "post-messages", .bool(true))
        GObjectAccess.set(meter, "interval", .uint64(levelIntervalNanoseconds))
        let valve = try builder.make("valve", name: "mute")
        GObjectAccess.set(valve, "drop", .bool(start.muted))
        let encoder = try builder.make("opusenc")
        GObjectAccess.set(encoder, "audio-type", nick: "voice")
        let payloader = try builder.make("rtpopuspay")
        let ssrc = UInt32.random(in: 1...UInt32.max)
        GObjectAccess.set(payloader, "pt", .uint(96))
        GObjectAccess.set(payloader, "ssrc", .uint(ssrc))
        let rtpFilter = try builder.capsFilter(rtpCaps(ssrc: ssrc))
        sending += [meter, valve, encoder, payloader, rtpFilter]
        try builder.link(sending)

        let webrtc = try builder.make("webrtcbin", name: "webrtc")
        configure(webrtc: webrtc, ice: ICEServers(urls: start.ice), log: log)
        guard let sinkPad = gst_element_request_pad_simple(webrtc, "sink_%u") else {
            throw Unavailable(reason: "webrtcbin refused a sending pad")
        }
        defer { gst_object_unref(sinkPad) }
        try setCodecPreferences(of: sinkPad, caps: rtpCaps(ssrc: ssrc))
        guard let rtpOutput = gst_element_get_static_pad(rtpFilter, "src") else { throw Unavailable(reason: "pipeline refused: no RTP output") }
        defer { gst_object_unref(rtpOutput) }
        guard gst_pad_link(rtpOutput, sinkPad) == GST_PAD_LINK_OK else {
            throw Unavailable(reason: "pipeline refused: cannot link the RTP output to webrtcbin")
        }

        // What is received, to the speaker: held out of the pipeline's state changes until
        // webrtcbin adds the pad it comes out of (cgst_attach_receiver_on_pad_added).
        let receiver = try builder.lockedBin("receiver")
        var receiving = try builder.make(["rtpopusdepay", "opusdec", "audioconvert", "audioresample"], in: receiver)
        if echoCancel {
            receiving.append(try builder.make("webrtcechoprobe", name: echoProbeName, in: receiver))
            receiving += try builder.make(["audioconvert", "audioresample"], in: receiver)
        }
        let sink = try builder.fragment(start.sink, role: "sink", pad: "sink", in: receiver)
        try builder.link(receiving)
        guard let last = receiving.last, gst_element_link(last, sink) != 0 else {
            throw Unavailable(reason: "sink pipeline refused: it does not take raw audio")
        }
        try builder.ghost("sink", of: receiving[0], on: receiver)

        GStreamerCallbacks.connect(webrtc: UnsafeMutableRawPointer(webrtc), to: events)
        cgst_attach_receiver_on_pad_added(webrtc, receiver)
        let voice = VoicePipeline(pipeline: builder.finish(), webrtc: webrtc, valve: valve, receiver: receiver, events: events,
                                  elements: ["webrtcdsp": echoFound])
        try voice.play(source: source, sink: sink)
        return voice
    }

    /// Starts the receiver (so that its sink opens now), then the pipeline, and hands the bus to
    /// the sync handler. An error posted on the way is why the pipeline is unavailable.
    private func play(source: UnsafeMutablePointer<GstElement>, sink: UnsafeMutablePointer<GstElement>) throws(Unavailable) {
        guard let bus = gst_element_get_bus(pipeline) else { throw Unavailable(reason: "pipeline refused: it has no bus") }
        defer { gst_object_unref(bus) }
        let started = gst_element_set_state(receiver, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE
            && gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE
        if let message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) {
            defer { gst_message_unref(message) }
            let part = Self.isInside(message, source) ? "source " : Self.isInside(message, sink) ? "sink " : ""
            throw Unavailable(reason: "\(part)pipeline refused: \(BusMessage.errorText(message))")
        }
        guard started else { throw Unavailable(reason: "pipeline refused to play") }
        GStreamerCallbacks.watch(bus: bus, to: events)
    }

    private static func isInside(_ message: UnsafeMutablePointer<GstMessage>, _ element: UnsafeMutablePointer<GstElement>) -> Bool {
        guard let origin = message.pointee.src else { return false }
        let ancestor = UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self)
        return origin == ancestor || gst_object_has_as_ancestor(origin, ancestor) != 0
    }

    private static func configure(webrtc: UnsafeMutablePointer<GstElement>, ice: ICEServers, log: (String) -> Void) {
        let object = UnsafeMutableRawPointer(webrtc)
        GObjectAccess.set(object, "bundle-policy", nick: "max-bundle")
        if let stun = ice.stun { GObjectAccess.set(object, "stun-server", .string(stun)) }
        for turn in ice.turn { GObjectAccess.emit(object, "add-turn-server", [.string(turn)]) }
        log("ICE servers: \(ice)")
        // libnice would otherwise look for a UPnP gateway (multicast on every interface), and
        // gather TCP candidates Janus does not use.
        guard let agent = GObjectAccess.object(object, "ice-agent") else {
            log("webrtcbin has no ICE agent to configure")
            return
        }
        defer { g_object_unref(agent) }
        GObjectAccess.set(agent, "ice-tcp", .bool(false))
        guard let nice = GObjectAccess.object(agent, "agent") else {
            log("the ICE agent has no libnice agent: UPnP stays as libnice sets it")
            return
        }
        defer { g_object_unref(nice) }
        if !GObjectAccess.set(nice, "upnp", .bool(false)) { log("libnice's agent has no upnp property") }
    }

    private static func setCodecPreferences(of pad: UnsafeMutablePointer<GstPad>, caps text: String) throws(Unavailable) {
        guard let transceiver = GObjectAccess.object(UnsafeMutableRawPointer(pad), "transceiver") else {
            throw Unavailable(reason: "webrtcbin gave its pad no transceiver")
        }
        defer { g_object_unref(transceiver) }
        guard let caps = gst_caps_from_string(text) else { throw Unavailable(reason: "the RTP caps do not parse") }
        defer { gst_caps_unref(caps) }
        GObjectAccess.set(transceiver, "direction", nick: "sendrecv")
        GObjectAccess.set(transceiver, "codec-preferences", .boxed(UnsafeMutableRawPointer(caps)))
    }

    // MARK: Negotiation

    /// Asks webrtcbin for an offer; posted as `offerCreated` or `negotiationFailed`.
    func createOffer() {
        let promise = GStreamerCallbacks.promise(events) { reply in
            if let sdp = reply.sdp { return .offerCreated(sdp: sdp) }
            return .negotiationFailed("cannot create an offer: \(reply.error ?? "no offer")")
        }
        GObjectAccess.emit(UnsafeMutableRawPointer(webrtc), "create-offer", [.boxed(nil), .boxed(UnsafeMutableRawPointer(promise))])
        gst_promise_unref(promise)
    }

    /// Sets the offer made by `createOffer` as the local description (ICE gathering starts).
    func setLocalOffer(sdp: String) {
        setDescription(sdp, type: GST_WEBRTC_SDP_TYPE_OFFER, signal: "set-local-description") { reply in
            reply.error.map { .negotiationFailed("cannot set the local offer: \($0)") }
        }
    }

    /// Sets the voice server's answer; posted as `remoteDescriptionSet` or `negotiationFailed`.
    func setRemoteAnswer(sdp: String) {
        setDescription(sdp, type: GST_WEBRTC_SDP_TYPE_ANSWER, signal: "set-remote-description") { reply in
            reply.error.map { .negotiationFailed("the voice server's answer was refused: \($0)") } ?? .remoteDescriptionSet
        }
    }

    private func setDescription(_ sdp: String, type: GstWebRTCSDPType, signal: String,
                                reply: @escaping @Sendable (PromiseReply) -> MediaSession.Input?) {
        var message: UnsafeMutablePointer<GstSDPMessage>?
        guard gst_sdp_message_new_from_text(sdp, &message) == GST_SDP_OK, let message else {
            events.post(.negotiationFailed("\(signal): the SDP does not parse"))
            return
        }
        guard let description = gst_webrtc_session_description_new(type, message) else {
            events.post(.negotiationFailed("\(signal): no session description"))
            return
        }
        defer { gst_webrtc_session_description_free(description) }
        let promise = GStreamerCallbacks.promise(events, reply)
        GObjectAccess.emit(UnsafeMutableRawPointer(webrtc), signal, [.boxed(UnsafeMutableRawPointer(description)), .boxed(UnsafeMutableRawPointer(promise))])
        gst_promise_unref(promise)
    }

    func addRemoteCandidate(mlineIndex: Int, candidate: String) {
        guard let mline = UInt32(exactly: mlineIndex) else { return }
        GObjectAccess.emit(UnsafeMutableRawPointer(webrtc), "add-ice-candidate", [.uint(mline), .string(candidate)])
    }

    /// Closes (true) or opens the valve before the encoder.
    func setMuted(_ muted: Bool) {
        GObjectAccess.set(valve, "drop", .bool(muted))
    }

    // MARK: Teardown

    /// Stops every element and thread of the pipeline (state NULL) and releases it. Idempotent.
    func stop() {
        guard !stopped else { return }
        stopped = true
        // The receiver is out of the pipeline's state changes until it was linked.
        if gst_element_is_locked_state(receiver) != 0 { gst_element_set_state(receiver, GST_STATE_NULL) }
        gst_element_set_state(pipeline, GST_STATE_NULL)
        if let bus = gst_element_get_bus(pipeline) {
            gst_bus_set_sync_handler(bus, nil, nil, nil)
            gst_object_unref(bus)
        }
        gst_object_unref(pipeline)
    }
}
