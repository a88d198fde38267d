import IPCProtocol
import JSONValue

/// A loaded VOD scenario and its clock.
struct VODPlayback: Sendable {
    let mediaId: String
    /// ACTIVE timelines with a valid time.
    let overlays: [IncomingOverlay]
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
        if core.scenarioLoaded(mediaId: current.mediaId, outcome.map(\.overlays.count), into: &effects), case .success(let playback) = outcome {
            vod = playback
        }
        await perform(effects)
    }

    private func loadScenario(api: BackendAPI, mediaId: String) async throws(RPCError) -> VODPlayback {
        let reply: JSONValue
        do {
            reply = try await api.vodScenario(mediaId: mediaId, os: settings.os ?? "")
        } catch {
            throw error.rpcError(notFound: .scenarioUnavailable)
        }
        guard let timelines = reply["timelines"]?.arrayValue else {
            throw RPCError.daemon(.scenarioUnavailable, "the VOD scenario of \(mediaId) has no timelines array")
        }
        var overlays: [IncomingOverlay] = []
        var times: [Double] = []
        for timeline in timelines where timeline["showStatus"]?.stringValue == "ACTIVE" {
            let name = timeline["timelineId"]?.idString ?? "(no timelineId)"
            guard let text = timeline["time"]?.stringValue ?? timeline["time"]?.idString, let seconds = VODClock.parseTime(text) else {
                log.warning("Skipping VOD timeline \(name): malformed time \(timeline["time"]?.jsonText ?? "null")",
                            ["INTERACTIVE_MEDIA_ID": mediaId, "INTERACTIVE_TIMELINE_ID": name])
                continue
            }
            guard let overlay = IncomingOverlay(payload: timeline) else {
                log.warning("Skipping a VOD timeline without timelineId, or with an id over \(IncomingOverlay.maxIdBytes) bytes",
                            ["INTERACTIVE_MEDIA_ID": mediaId])
                continue
            }
            overlays.append(overlay)
            times.append(seconds)
        }
        return VODPlayback(mediaId: mediaId, overlays: overlays, clock: VODClock(times: times))
    }

    /// `player.time`: in a VOD room, fires the timelines the clock passed.
    func playerTime(_ seconds: Double) async {
        guard let room, room.mode == .vod, room.state == .joined, var playback = vod, playback.mediaId == room.mediaId else { return }
        let firing = playback.clock.report(seconds)
        vod = playback
        for index in firing {
            await route(playback.overlays[index], receivedAt: Timestamp.nowMs(), room: RoomKey(mediaId: room.mediaId, mode: .vod))
        }
    }
}
