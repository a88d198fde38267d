import IPCProtocol
import JSONValue

/// A loaded VOD scenario and its clock.
struct VODPlayback: Sendable {
    let mediaId: String
    /// ACTIVE timelines with a valid time, as JSON read when they fire.
    let timelines: [VODTimeline]
    var clock: VODClock
}

/// VOD mode: the scenario over REST, overlays on the player's clock (BACKEND.md, VOD).
extension RoomController {
    /// Loads the scenario; the room becomes joined, or error with the reason.
    func startVOD() async {
        guard let current = room, current.mode == .vod else { return }
        let outcome: Result<VODPlayback, RPCError>
        do {
            let api = try BackendAPI(settings: settings, token: session.token)
            outcome = .success(try await loadScenario(api: api, mediaId: current.mediaId))
        } catch {
            outcome = .failure(error)
        }
        var effects: [RoomEffect] = []
        if core.scenarioLoaded(mediaId: current.mediaId, outcome.map(\.timelines.count), into: &effects), case .success(let playback) = outcome {
            vod = playback
        }
        perform(effects)
    }

    private func loadScenario(api: BackendAPI, mediaId: String) async throws(RPCError) -> VODPlayback {
        let scenario: VODScenarioReply
        do {
            scenario = try await api.vodScenario(mediaId: mediaId, os: settings.os ?? "")
        } catch {
            if case .refused = error, let token = api.requester.token { sessionRefused(token: token, source: "VOD scenario") }
            throw error.rpcError(notFound: .scenarioUnavailable)
        }
        for skip in scenario.skips { log.warning(skip, ["INTERACTIVE_MEDIA_ID": mediaId]) }
        if scenario.skippedCount > scenario.skips.count {
            log.warning("Skipped \(scenario.skippedCount - scenario.skips.count) more VOD timelines", ["INTERACTIVE_MEDIA_ID": mediaId])
        }
        return VODPlayback(mediaId: mediaId, timelines: scenario.timelines, clock: VODClock(times: scenario.timelines.map(\.seconds)))
    }

    /// `player.time`: in a VOD room, fires the timelines the clock passed.
    func playerTime(_ seconds: Double) {
        guard let room, room.mode == .vod, room.state == .joined, var playback = vod, playback.mediaId == room.mediaId else { return }
        let firing = playback.clock.report(seconds)
        vod = playback
        for index in firing {
            guard let overlay = playback.timelines[index].overlay else { continue }
            route(overlay, receivedAt: Timestamp.nowMs(), room: RoomKey(mediaId: room.mediaId, mode: .vod))
        }
    }
}
