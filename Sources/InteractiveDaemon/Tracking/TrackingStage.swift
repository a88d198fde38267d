/// The stages of one overlay's tracking session, as named in `emit-ack`.
public enum TrackingStage: String, Sendable, CaseIterable {
    case received
    case rendered
    case answer
    case answerSucceeded = "answer-succeeded"
    case answerFailed = "answer-failed"

    /// `actionResult` of the answer stages.
    var actionResult: String? {
        switch self {
        case .answer: return "attempted"
        case .answerSucceeded: return "success"
        case .answerFailed: return "failure"
        case .received, .rendered: return nil
        }
    }
}

/// Stages, as bits: which stages of a session were sent (a `Set` allocated storage and hashed
/// for every tracked overlay).
struct TrackingStages: Sendable, Equatable, ExpressibleByArrayLiteral {
    private var bits: UInt8 = 0

    init<Stages: Sequence<TrackingStage>>(_ stages: Stages) {
        for stage in stages { insert(stage) }
    }

    init(arrayLiteral stages: TrackingStage...) { self.init(stages) }

    func contains(_ stage: TrackingStage) -> Bool { bits & Self.bit(stage) != 0 }

    mutating func insert(_ stage: TrackingStage) { bits |= Self.bit(stage) }

    private static func bit(_ stage: TrackingStage) -> UInt8 {
        switch stage {
        case .received: return 1
        case .rendered: return 2
        case .answer: return 4
        case .answerSucceeded: return 8
        case .answerFailed: return 16
        }
    }
}

/// How the `rendered` stage ended.
enum RenderStatus: String, Sendable {
    case success
    case failed
    case timeout
    case cancelled
}
