/// Counts per second of simulated time, second 0 being the one in which the backend went away.
public struct FleetTimeline: Sendable {
    /// Connection attempts started.
    public private(set) var attempts: [Int] = []
    /// Attempts started while the backend was back but over its accept capacity.
    public private(set) var rejected: [Int] = []
    /// Connections established.
    public private(set) var connections: [Int] = []
    /// `emit-ack`s sent.
    public private(set) var acksSent: [Int] = []
    /// Attempts accepted, against the capacity.
    private var accepted: [Int] = []

    /// The number of seconds with counts.
    public var seconds: Int { attempts.count }

    mutating func countAttempt(at time: Int64) { Self.increment(&attempts, at: time) }
    mutating func countRejected(at time: Int64) { Self.increment(&rejected, at: time) }
    mutating func countConnection(at time: Int64) { Self.increment(&connections, at: time) }
    mutating func countAckSent(at time: Int64) { Self.increment(&acksSent, at: time) }

    /// Takes one of the second's `limit` connections; false when they are all taken.
    mutating func accept(at time: Int64, limit: Int?) -> Bool {
        let second = Self.second(of: time)
        if let limit, second < accepted.count, accepted[second] >= limit { return false }
        Self.increment(&accepted, at: time)
        return true
    }

    /// Every series as long as the longest one.
    mutating func equalizeLengths() {
        let length = [attempts, rejected, connections, acksSent, accepted].map(\.count).max() ?? 0
        for keyPath in [\FleetTimeline.attempts, \.rejected, \.connections, \.acksSent, \.accepted] {
            let short = length - self[keyPath: keyPath].count
            self[keyPath: keyPath].append(contentsOf: repeatElement(0, count: short))
        }
    }

    private static func second(of time: Int64) -> Int { Int(max(0, time) / 1000) }

    private static func increment(_ series: inout [Int], at time: Int64) {
        let second = second(of: time)
        if second >= series.count { series.append(contentsOf: repeatElement(0, count: second - series.count + 1)) }
        series[second] += 1
    }
}
