import IPCProtocol
import JSONValue

/// The floating predict/lucky button of one timeline, as players draw it.
struct PredictButton: Sendable, Equatable {
    enum Image: String, Sendable {
        /// The resting image.
        case idle
        /// The attention image: a question is open.
        case power
    }

    let timelineId: String
    var kind: OverlayKind
    var visible: Bool
    var image: Image
    var imageIdle: String?
    var imagePower: String?
    /// 1.0 right after a change, 0.5 once it has rested five seconds.
    var opacity: Double

    /// The `predict.button` event.
    var event: PredictButtonEvent {
        PredictButtonEvent(timelineId: timelineId, kind: kind.rawValue, visible: visible, image: image.rawValue,
                           imageIdle: imageIdle, imagePower: imagePower, opacity: opacity)
    }

    /// The button as the status board's `predict` section lists it: the event's data.
    var json: JSONValue { event.data }
}
