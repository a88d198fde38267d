import JSONValue
import Runtime

/// How large the backend's REST replies may be, and how they are read: each body is checked as
/// JSON once and read part by part (`JSONDocument`), so that a reply costs about its own size in
/// memory whatever its shape, and a large one is read off the event loop (docs/ipc.md, "Limits").
enum BackendReplies {
    /// The largest reply of the calls that answer a few small members: VIP status, interactive
    /// status, an answer, a play request.
    static let maxReplyBytes = 256 * 1024
    /// The most answered timelines taken from one interactive status (as many as the store keeps).
    static let maxAnsweredIds = 10_000
    /// The most JSON of an answer's `data` given on to players (`answer.result`); larger: null.
    static let maxAnswerDataBytes = 16 * 1024
    /// Bodies up to this size are read where they arrive: a few microseconds of work.
    static let inlineBytes = 16 * 1024

    /// `read(document)` of `body`, or nil when the body is not JSON (or the task was cancelled).
    /// A body over `inlineBytes` is checked and read on a worker thread (`BlockingCall`): a
    /// 4 MiB scenario takes tens of milliseconds to read, which the event loop must not wait for.
    static func read<Value: Sendable>(_ body: [UInt8], _ read: @escaping @Sendable (JSONDocument) -> Value?) async -> Value? {
        let work: @Sendable () -> Value? = {
            guard let document = try? JSONDocument(validating: body) else { return nil }
            return read(document)
        }
        guard body.count > inlineBytes else { return work() }
        return (try? await BlockingCall.run(work)) ?? nil
    }
}

/// The backend's answer shape, `{"success": bool, "code": …, "data": …}`: the reply of
/// `POST /api/actions`, and a refusal of any call whatever its HTTP status.
struct AnswerReply: Sendable, Equatable {
    let success: Bool
    /// `code` (a string or a whole number), cut to 64 characters; nil when absent or empty.
    let code: String?
    /// `data`, or null when absent or larger than `BackendReplies.maxAnswerDataBytes`.
    let data: JSONValue

    /// nil unless the document is an object with a boolean `success`.
    init?(_ document: JSONDocument) {
        let root = document.root
        guard document.kind(of: root) == .object, let success = document.member("success", of: root).map(document.value)?.boolValue
        else { return nil }
        self.success = success
        code = document.member("code", of: root).map(document.value)?.idString.map { PeerText.clipped($0, limit: 64) }
        if let span = document.member("data", of: root), span.range.count <= BackendReplies.maxAnswerDataBytes {
            data = document.value(span)
        } else {
            data = .null
        }
    }

    /// A refusal of a call other than an answer: `success: false`.
    static func refusal(_ document: JSONDocument) -> AnswerReply? {
        guard let reply = AnswerReply(document), !reply.success else { return nil }
        return reply
    }
}

/// `GET /api/interactive-status/{mediaId}`, reduced to what the contract says it holds.
struct InteractiveStatusReply: Sendable, Equatable {
    /// The answered timelines: ids (strings or whole numbers) of at most
    /// `IncomingOverlay.maxIdBytes` (a longer one names no timeline the daemon shows), the first
    /// `BackendReplies.maxAnsweredIds` of them.
    let answered: [String]

    /// nil without an `answered` array.
    init?(_ document: JSONDocument) {
        guard let list = document.member("answered", of: document.root), document.kind(of: list) == .array else { return nil }
        var answered: [String] = []
        document.forEachElement(of: list) { element in
            if element.range.count <= IncomingOverlay.maxIdBytes + 2, let id = IncomingOverlay.id(document.value(element)) {
                answered.append(id)
            }
            return answered.count < BackendReplies.maxAnsweredIds
        }
        self.answered = answered
    }

    /// What `interactive.status` returns: `{"answered": […]}`, never the backend's whole reply.
    var json: JSONValue { ["answered": .array(answered.map(JSONValue.string))] }
}

/// One ACTIVE timeline of a VOD scenario: its time and its JSON, kept as bytes (a value tree
/// would cost many times more) and read when it fires.
struct VODTimeline: Sendable, Equatable {
    let timelineId: String
    let seconds: Double
    let json: [UInt8]

    /// The overlay it shows (its JSON was checked when the scenario loaded).
    var overlay: IncomingOverlay? { (try? JSONValue.parse(json)).flatMap { IncomingOverlay(payload: $0) } }
}

/// `GET /api/ctc/scenario/v2/vod/{mediaId}/{os}`: the ACTIVE timelines with a valid time.
struct VODScenarioReply: Sendable, Equatable {
    /// The largest timeline kept, in bytes of JSON (overlays are small objects; a live overlay
    /// may be 1 MiB but what `overlay.show` gives of it is 16 KiB).
    static let maxTimelineBytes = 64 * 1024
    /// Skipped timelines named in the log, the rest counted.
    static let maxNamedSkips = 8

    let timelines: [VODTimeline]
    /// Why some timelines were skipped: the first `maxNamedSkips`, as log lines.
    let skips: [String]
    let skippedCount: Int

    /// nil without a `timelines` array.
    init?(_ document: JSONDocument) {
        guard let list = document.member("timelines", of: document.root), document.kind(of: list) == .array else { return nil }
        var timelines: [VODTimeline] = []
        var skips: [String] = []
        var skippedCount = 0
        func skip(_ reason: String) {
            skippedCount += 1
            if skips.count < Self.maxNamedSkips { skips.append(reason) }
        }
        document.forEachElement(of: list) { span in
            guard document.kind(of: span) == .object,
                  document.member("showStatus", of: span).map(document.value)?.stringValue == "ACTIVE" else { return true }
            let name = document.member("timelineId", of: span).map(document.value)?.idString.map { PeerText.clipped($0, limit: 64) }
                ?? "(no timelineId)"
            guard span.range.count <= Self.maxTimelineBytes else {
                skip("Skipping VOD timeline \(name): \(span.range.count) bytes of JSON, over \(Self.maxTimelineBytes)")
                return true
            }
            let timeline = document.value(span)
            guard let text = timeline["time"]?.stringValue ?? timeline["time"]?.idString, let seconds = VODClock.parseTime(text) else {
                skip("Skipping VOD timeline \(name): malformed time \(PeerText.clipped(timeline["time"]?.jsonText ?? "null", limit: 64))")
                return true
            }
            guard let overlay = IncomingOverlay(payload: timeline) else {
                skip("Skipping a VOD timeline without timelineId, or with an id over \(IncomingOverlay.maxIdBytes) bytes")
                return true
            }
            timelines.append(VODTimeline(timelineId: overlay.timelineId, seconds: seconds, json: Array(document.bytes[span.range])))
            return true
        }
        self.timelines = timelines
        self.skips = skips
        self.skippedCount = skippedCount
    }
}
