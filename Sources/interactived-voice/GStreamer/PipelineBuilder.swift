import CGStreamer
import CGStreamerShims

/// Which element factories the media process needs, and whether this machine has them.
enum ElementFactory {
    /// Every element the pipeline cannot run without (`webrtcdsp` is optional).
    static let requiredElements = [
        "webrtcbin", "nicesrc", "nicesink", "opusenc", "opusdec", "rtpopuspay", "rtpopusdepay",
        "rtphdrextclientaudiolevel", "valve", "level", "audioconvert", "audioresample", "capsfilter",
    ]

    static func exists(_ name: String) -> Bool {
        guard let factory = gst_element_factory_find(name) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(factory))
        return true
    }
}

/// Makes the elements of one pipeline, each added to the pipeline (or to a bin of it) as it is
/// made, so that a failure half-way releases everything with the pipeline.
final class PipelineBuilder {
    typealias Element = UnsafeMutablePointer<GstElement>

    let pipeline: Element
    private var handedOver = false

    init() throws(VoicePipeline.Unavailable) {
        guard let pipeline = gst_pipeline_new("voice") else { throw VoicePipeline.Unavailable(reason: "cannot make a pipeline") }
        self.pipeline = pipeline
    }

    deinit {
        guard !handedOver else { return }
        gst_element_set_state(pipeline, GST_STATE_NULL)
        gst_object_unref(pipeline)
    }

    /// The pipeline, now owned by the caller.
    func finish() -> Element {
        handedOver = true
        return pipeline
    }

    /// A fragment of the daemon's (`voiceSource`, `voiceSink`) as a bin whose one unlinked pad
    /// (`pad`: "src" or "sink") is ghosted.
    func fragment(_ description: String, role: String, pad: String, in bin: Element? = nil) throws(VoicePipeline.Unavailable) -> Element {
        var error: UnsafeMutablePointer<GError>?
        let parsed = gst_parse_bin_from_description(description, 1, &error)
        if let error {
            let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
            g_error_free(error)
            if let parsed { gst_object_unref(parsed) }
            throw VoicePipeline.Unavailable(reason: "\(role) pipeline refused: \(message)")
        }
        guard let parsed else { throw VoicePipeline.Unavailable(reason: "\(role) pipeline refused: it is empty") }
        let element = UnsafeMutableRawPointer(parsed).assumingMemoryBound(to: GstElement.self)
        gst_object_set_name(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self), role)
        add(element, to: bin)
        guard let ghost = gst_element_get_static_pad(element, pad) else {
            throw VoicePipeline.Unavailable(reason: "\(role) pipeline refused: it has no unlinked \(pad) pad")
        }
        gst_object_unref(ghost)
        return element
    }

    /// A new element of `factory`, added to `bin` (the pipeline when nil).
    func make(_ factory: String, name: String? = nil, in bin: Element? = nil) throws(VoicePipeline.Unavailable) -> Element {
        guard let element = gst_element_factory_make(factory, name) else {
            throw VoicePipeline.Unavailable(reason: "missing element \(factory)")
        }
        add(element, to: bin)
        return element
    }

    func make(_ factories: [String], in bin: Element? = nil) throws(VoicePipeline.Unavailable) -> [Element] {
        var elements: [Element] = []
        for factory in factories { elements.append(try make(factory, in: bin)) }
        return elements
    }

    /// A capsfilter with `caps` (caps in GStreamer's text form).
    func capsFilter(_ caps: String, in bin: Element? = nil) throws(VoicePipeline.Unavailable) -> Element {
        let filter = try make("capsfilter", in: bin)
        guard let parsed = gst_caps_from_string(caps) else { throw VoicePipeline.Unavailable(reason: "caps do not parse: \(caps)") }
        defer { gst_caps_unref(parsed) }
        GObjectAccess.set(filter, "caps", .boxed(UnsafeMutableRawPointer(parsed)))
        return filter
    }

    /// A bin of the pipeline, kept out of its state changes (`gst_element_set_locked_state`).
    func lockedBin(_ name: String) throws(VoicePipeline.Unavailable) -> Element {
        guard let bin = gst_bin_new(name) else { throw VoicePipeline.Unavailable(reason: "cannot make a bin") }
        add(bin, to: nil)
        gst_element_set_locked_state(bin, 1)
        return bin
    }

    /// Ghosts `element`'s pad `pad` on `bin` under the same name.
    func ghost(_ pad: String, of element: Element, on bin: Element) throws(VoicePipeline.Unavailable) {
        guard let target = gst_element_get_static_pad(element, pad) else { throw VoicePipeline.Unavailable(reason: "no \(pad) pad to ghost") }
        defer { gst_object_unref(target) }
        guard let ghost = gst_ghost_pad_new(pad, target), gst_element_add_pad(bin, ghost) != 0 else {
            throw VoicePipeline.Unavailable(reason: "cannot ghost the \(pad) pad")
        }
    }

    /// Links each element to the next.
    func link(_ chain: [Element]) throws(VoicePipeline.Unavailable) {
        for (upstream, downstream) in zip(chain, chain.dropFirst()) where gst_element_link(upstream, downstream) == 0 {
            throw VoicePipeline.Unavailable(reason: "pipeline refused: cannot link \(Self.name(of: upstream)) to \(Self.name(of: downstream))")
        }
    }

    static func name(of element: Element) -> String {
        guard let raw = gst_object_get_name(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstObject.self)) else { return "?" }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    private func add(_ element: Element, to bin: Element?) {
        let parent = UnsafeMutableRawPointer(bin ?? pipeline).assumingMemoryBound(to: GstBin.self)
        gst_bin_add(parent, element)
    }
}
