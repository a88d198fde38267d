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

/// How the `rendered` stage ended.
enum RenderStatus: String, Sendable {
    case success
    case failed
    case timeout
    case cancelled
}
