/// What a simulation counted, and the figures drawn from it. "After the return" windows start
/// at the second in which the backend came back.
public struct FleetRun: Sendable {
    public let scenario: FleetScenario
    public let timeline: FleetTimeline
    /// When each device connected again (ms since the backend went away), earliest first.
    public let connectionTimes: [Int64]

    /// The second in which the backend came back.
    public var returnSecond: Int { scenario.outageSeconds }

    /// Highest count in one second of `series` over `seconds` seconds from the return.
    public func peak(_ series: [Int], seconds: Int) -> Int {
        window(series, seconds: seconds).max() ?? 0
    }

    /// Mean count per second over `seconds` seconds from the return.
    public func mean(_ series: [Int], seconds: Int) -> Double {
        Double(window(series, seconds: seconds).reduce(0, +)) / Double(max(1, seconds))
    }

    /// The highest count in one second over the mean count per second, over `seconds` seconds
    /// from the return (0 when nothing happened).
    public func peakToMean(_ series: [Int], seconds: Int) -> Double {
        let mean = mean(series, seconds: seconds)
        return mean > 0 ? Double(peak(series, seconds: seconds)) / mean : 0
    }

    /// Mean attempts per second over the last `seconds` seconds before the return: the load the
    /// backend's front (load balancer) carries while the backend is away.
    public func outageAttemptsPerSecond(seconds: Int) -> Double {
        let start = max(0, returnSecond - seconds)
        let end = min(returnSecond, timeline.seconds)
        guard start < end else { return 0 }
        return Double(timeline.attempts[start..<end].reduce(0, +)) / Double(end - start)
    }

    /// Seconds from the return until `fraction` of the devices were connected again.
    public func secondsUntilConnected(fraction: Double) -> Double {
        guard !connectionTimes.isEmpty else { return 0 }
        let needed = min(connectionTimes.count, max(1, Int((fraction * Double(scenario.devices)).rounded(.up))))
        return Double(connectionTimes[needed - 1] - Int64(returnSecond) * 1000) / 1000
    }

    /// Seconds from the return to the end of the last second in which an ack was sent.
    public var secondsUntilLastAck: Int {
        guard let last = timeline.acksSent.lastIndex(where: { $0 > 0 }) else { return 0 }
        return last + 1 - returnSecond
    }

    /// One line per second, from `secondsBefore` seconds before the return to the last count (at
    /// least `secondsAfter` seconds after it): `second,attempts,rejected,connections,acks_sent`,
    /// the second counted from the return.
    public func csv(secondsBefore: Int, secondsAfter: Int) -> String {
        var text = "second,attempts,rejected,connections,acks_sent\n"
        let end = max(timeline.seconds, returnSecond + secondsAfter)
        for second in max(0, returnSecond - secondsBefore)..<end {
            let counts = [timeline.attempts, timeline.rejected, timeline.connections, timeline.acksSent].map {
                second < $0.count ? $0[second] : 0
            }
            text += "\(second - returnSecond)," + counts.map(String.init).joined(separator: ",") + "\n"
        }
        return text
    }

    private func window(_ series: [Int], seconds: Int) -> ArraySlice<Int> {
        let start = min(returnSecond, series.count)
        let counts = series[start..<max(start, min(series.count, returnSecond + seconds))]
        return counts.isEmpty ? [0] : counts
    }
}
