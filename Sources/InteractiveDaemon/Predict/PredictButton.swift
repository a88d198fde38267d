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

    /// The `predict.button` event's data.
    var json: JSONValue {
        ["timelineId": .string(timelineId), "kind": .string(kind.rawValue), "visible": .bool(visible),
         "image": .string(image.rawValue), "imageIdle": JSONValue(imageIdle), "imagePower": JSONValue(imagePower),
         "opacity": .number(opacity)]
    }
}
