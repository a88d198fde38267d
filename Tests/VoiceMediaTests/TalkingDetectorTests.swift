import Testing
@testable import interactived_voice

@Suite struct TalkingDetectorTests {
    private let thresholds = TalkingDetector.Thresholds(startLevel: 40, stopLevel: 50, attack: .milliseconds(200), release: .milliseconds(800))

    /// Feeds `levels` 100 ms apart from `start`; returns the changes with their times (ms).
    private func feed(_ detector: inout TalkingDetector, _ levels: [Int], from start: Int = 0) -> [(Int, Bool)] {
        var changes: [(Int, Bool)] = []
        for (index, level) in levels.enumerated() {
            let time = start + index * 100
            if let change = detector.observe(level: level, at: .milliseconds(time)) { changes.append((time, change)) }
        }
        return changes
    }

    @Test func talkingStartsAfterTheAttackOfLoudLevels() {
        var detector = TalkingDetector(thresholds: thresholds)
        let changes = feed(&detector, [127, 20, 20, 20, 20])
        #expect(changes.map(\.0) == [300])
        #expect(changes.map(\.1) == [true])
    }

    @Test func aShortBurstIsNotTalking() {
        var detector = TalkingDetector(thresholds: thresholds)
        #expect(feed(&detector, [20, 20, 127, 20, 20, 127]).isEmpty)
        #expect(!detector.isTalking)
    }

    @Test func talkingStopsOnlyAfterTheReleaseOfQuietLevels() {
        var detector = TalkingDetector(thresholds: thresholds)
        let changes = feed(&detector, [20, 20, 20] + [127, 127, 127, 127, 127, 127, 127, 127, 127, 127])
        #expect(changes.map(\.1) == [true, false])
        #expect(changes.map(\.0) == [200, 1100])
    }

    @Test func levelsBetweenTheThresholdsKeepTheCurrentState() {
        var quiet = TalkingDetector(thresholds: thresholds)
        #expect(feed(&quiet, Array(repeating: 45, count: 30)).isEmpty)
        var talking = TalkingDetector(thresholds: thresholds)
        let changes = feed(&talking, [20, 20, 20] + Array(repeating: 45, count: 30))
        #expect(changes.map(\.1) == [true])
    }

    @Test func aPauseShorterThanTheReleaseDoesNotStopTalking() {
        var detector = TalkingDetector(thresholds: thresholds)
        let changes = feed(&detector, [20, 20, 20, 127, 127, 127, 20, 127, 127, 127, 127, 127, 20])
        #expect(changes.map(\.1) == [true])
    }

    @Test func silenceEndsTalkingAtOnce() {
        var detector = TalkingDetector(thresholds: thresholds)
        _ = feed(&detector, [20, 20, 20])
        let wasTalking = detector.silence()
        #expect(wasTalking)
        #expect(!detector.isTalking)
        let again = detector.silence()
        #expect(!again)
    }

    @Test func rmsBecomesRFC6464Levels() {
        #expect(TalkingDetector.rfc6464Level(rmsDecibels: -9.2) == 9)
        #expect(TalkingDetector.rfc6464Level(rmsDecibels: 0.5) == 0)
        #expect(TalkingDetector.rfc6464Level(rmsDecibels: -300) == 127)
        #expect(TalkingDetector.rfc6464Level(rmsDecibels: -.infinity) == 127)
        #expect(TalkingDetector.rfc6464Level(rmsDecibels: .nan) == 127)
    }
}
