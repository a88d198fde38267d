/// Decides when this box's microphone is talking, from its level measured at intervals, with
/// hysteresis: talking starts after the level has stayed at or above `startLevel` for `attack`,
/// and stops after it has stayed at or below `stopLevel` for `release`. Levels are RFC 6464's
/// -dBov (0 the loudest, 127 silence), so "louder" is a smaller number. Times are those of the
/// measurements (the pipeline's running time): no clock is read here.
struct TalkingDetector {
    struct Thresholds: Equatable {
        /// Talking starts at this level or louder (-dBov).
        var startLevel = 40
        /// Talking stops at this level or quieter (-dBov); quieter than `startLevel`.
        var stopLevel = 50
        /// How long the level must stay loud before talking starts.
        var attack = Duration.milliseconds(200)
        /// How long the level must stay quiet before talking stops.
        var release = Duration.milliseconds(800)
    }

    let thresholds: Thresholds
    private(set) var isTalking = false
    private var loudSince: Duration?
    private var quietSince: Duration?

    init(thresholds: Thresholds = Thresholds()) {
        self.thresholds = thresholds
    }

    /// Takes the level measured at `time`; returns the new state when it changed.
    mutating func observe(level: Int, at time: Duration) -> Bool? {
        if isTalking {
            guard level >= thresholds.stopLevel else {
                quietSince = nil
                return nil
            }
            let since = quietSince ?? time
            quietSince = since
            guard time - since >= thresholds.release else { return nil }
            isTalking = false
            quietSince = nil
            return false
        }
        guard level <= thresholds.startLevel else {
            loudSince = nil
            return nil
        }
        let since = loudSince ?? time
        loudSince = since
        guard time - since >= thresholds.attack else { return nil }
        isTalking = true
        loudSince = nil
        return true
    }

    /// Not talking from now on (the microphone was muted); true when it was talking.
    mutating func silence() -> Bool {
        defer {
            isTalking = false
            loudSince = nil
            quietSince = nil
        }
        return isTalking
    }
}

extension TalkingDetector {
    /// RFC 6464's level for an RMS in dB relative to full scale (the `level` element's `rms`):
    /// its negation, rounded and clamped to 0...127.
    static func rfc6464Level(rmsDecibels: Double) -> Int {
        guard rmsDecibels.isFinite else { return 127 }
        return Int(min(127, max(0, (-rmsDecibels).rounded())))
    }
}
