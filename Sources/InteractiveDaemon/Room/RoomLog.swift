/// A log line the room core asks for.
enum RoomLogLine: Sendable, Equatable {
    /// The connection is up (notice), or back after an outage (info) of this long with this
    /// many failed attempts.
    case connected(socketId: String, outage: Duration?, failedAttempts: Int)
    /// A failure that begins an outage (warning) or one more attempt during it (debug).
    case failure(BackendOutage.FailureLog, reason: String, attempt: Int, retryIn: Duration, everConnected: Bool)
    /// The backend refused (error) or ended (error) the connection.
    case refused(String)
    case ended(String)
    /// The server did not ack join-room in time (warning); the room is taken as joined anyway.
    case joinNotAcked(mediaId: String)
    /// The live room is joined (notice).
    case joined(mediaId: String)
    /// The VOD room is joined with a scenario of this many timelines (notice).
    case vodJoined(mediaId: String, timelines: Int)
    /// The VOD scenario could not be loaded (error).
    case scenarioUnavailable(mediaId: String, message: String)
    /// The room kept from the previous run is joined again (notice), or cannot be: its mode
    /// lacks configuration (warning).
    case rejoining(Room)
    case cannotRejoin(Room, missing: [String])
}

extension RoomController {
    /// Writes a log line the room core asked for.
    func write(_ line: RoomLogLine) {
        switch line {
        case .connected(let id, let outage?, let failures):
            log.info("Backend connection back after \(BackendOutage.seconds(outage)) (\(failures) failed attempts); socket \(id)",
                     ["INTERACTIVE_SOCKET_ID": id, "INTERACTIVE_OUTAGE_MS": String(BackendOutage.milliseconds(outage))],
                     id: .backendRestored)
        case .connected(let id, nil, _):
            log.notice("Connected to the backend; socket \(id)", ["INTERACTIVE_SOCKET_ID": id], id: .backendConnected)
        case .failure(let decision, let reason, let attempt, let delay, let everConnected):
            let retry = "attempt \(attempt) in \(BackendOutage.seconds(delay))"
            switch decision {
            case .outageBegins:
                let what = everConnected ? "Backend connection lost" : "Backend unreachable"
                log.warning("\(what): \(reason); reconnecting (\(retry); later attempts are logged at debug level)",
                            id: .backendDisconnected)
            case .stillOut(let failures):
                log.debug("Backend still unreachable after \(failures) failed attempts: \(reason); \(retry)")
            }
        case .refused(let error):
            log.error("The backend refused the connection: \(error)", id: .backendDisconnected)
        case .ended(let error):
            log.error("The backend ended the connection: \(error)", id: .backendDisconnected)
        case .joinNotAcked(let mediaId):
            log.warning("The backend did not ack join-room within 5 s; taking the room as joined", ["INTERACTIVE_MEDIA_ID": mediaId])
        case .joined(let mediaId):
            log.notice("Room \(mediaId) (live) joined", ["INTERACTIVE_MEDIA_ID": mediaId], id: .roomJoined)
        case .vodJoined(let mediaId, let timelines):
            log.notice("Room \(mediaId) (vod) joined: scenario of \(timelines) timelines loaded", ["INTERACTIVE_MEDIA_ID": mediaId],
                       id: .roomJoined)
        case .scenarioUnavailable(let mediaId, let message):
            log.error("VOD scenario unavailable: \(message)", ["INTERACTIVE_MEDIA_ID": mediaId])
        case .rejoining(let kept):
            log.notice("Joining the room kept from the previous run", ["INTERACTIVE_MEDIA_ID": kept.mediaId,
                                                                         "INTERACTIVE_MODE": kept.mode.rawValue])
        case .cannotRejoin(let kept, let missing):
            log.warning("The kept room cannot be joined again: \(kept.mode.rawValue) mode needs configuration: \(missing.joined(separator: ", "))",
                        ["INTERACTIVE_MEDIA_ID": kept.mediaId])
        }
    }
}
