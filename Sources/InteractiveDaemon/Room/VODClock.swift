/// The VOD timeline against the player's reported time (BACKEND.md, VOD).
///
/// A timeline fires once, when its time lies in (previous report, this report]. Before the
/// first report the clock stands just before 0, so a timeline at 0 fires on a first report of
/// 5 s or less. A step forward of more than 5 s, or any step backward, is a seek: nothing passed
/// over fires, and a seek that lands exactly on a timeline does not fire it. Nothing fires twice.
/// Comparing intervals (not whole seconds) means players reporting every 0.25 s, every 0.7 s or
/// skipping seconds never miss one.
struct VODClock: Sendable {
    struct Entry: Sendable {
        let seconds: Double
        let index: Int
    }

    /// The largest forward step that is still playback rather than a seek.
    static let maxPlaybackStep = 5.0

    /// Sorted by time.
    private let entries: [Entry]
    private var previous: Double?
    private var fired: Set<Int> = []

    init(times: [Double]) {
        entries = times.enumerated().map { Entry(seconds: $0.element, index: $0.offset) }.sorted {
            $0.seconds == $1.seconds ? $0.index < $1.index : $0.seconds < $1.seconds
        }
    }

    /// Takes a report; returns the indexes (into `times`) that fire, in time order.
    mutating func report(_ seconds: Double) -> [Int] {
        let start = previous ?? -Double.ulpOfOne
        previous = seconds
        let step = seconds - start
        guard step >= 0, step <= VODClock.maxPlaybackStep || start < 0 && seconds <= VODClock.maxPlaybackStep else {
            return []
        }
        var firing: [Int] = []
        for entry in entries where entry.seconds > start && entry.seconds <= seconds && !fired.contains(entry.index) {
            fired.insert(entry.index)
            firing.append(entry.index)
        }
        return firing
    }

    /// Parses `SS`, `MM:SS` or `HH:MM:SS` (fractions allowed in the last part); nil when malformed.
    static func parseTime(_ text: String) -> Double? {
        let parts = text.trimmedOfBlanks.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (offset, part) in parts.enumerated() {
            let isLast = offset == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isNumber || (isLast && $0 == ".") }),
                  let value = Double(part), value >= 0 else { return nil }
            if offset > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        return total
    }
}
