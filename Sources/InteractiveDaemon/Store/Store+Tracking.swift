import JSONValue

/// One change to tracking's tables.
enum TrackingWrite: Sendable, Equatable {
    /// An ack to deliver after a restart (an existing one with its key is kept).
    case ack(PendingAck)
    /// An open session's state; nil deletes its row.
    case session(String, state: JSONValue?, at: Int64)
    /// An ack delivered.
    case deleteAck(PendingAck)
}

/// Tracking's tables: `pending_acks` (acks until the server took them) and `tracking_sessions`
/// (open sessions, so that a restart can close them).
extension Store {
    /// Applies `writes` in order in one transaction. When that fails, each write is applied in a
    /// transaction of its own, so a bad write costs only itself. Returns each write's error, nil
    /// when it was stored.
    func apply(_ writes: [TrackingWrite]) async -> [(any Error)?] {
        do {
            try await recordingHealth { try inTransaction { for write in writes { try perform(write) } } }
            return Array(repeating: nil, count: writes.count)
        } catch {
            guard writes.count > 1 else { return [error] }
            // One at a time, so that what fits is stored. The health is the batch's: a small write
            // that still fits on a full disk does not clear the problem the others met.
            var failures: [(any Error)?] = []
            for write in writes {
                do {
                    try inTransaction { try perform(write) }
                    failures.append(nil)
                } catch {
                    failures.append(error)
                }
            }
            await noteWriteOutcome(failures.last { $0 != nil } ?? nil)
            return failures
        }
    }

    private func inTransaction(_ body: () throws -> Void) throws {
        try database.query("BEGIN IMMEDIATE")
        do {
            try body()
            try database.query("COMMIT")
        } catch {
            _ = try? database.query("ROLLBACK")
            throw error
        }
    }

    private func perform(_ write: TrackingWrite) throws {
        switch write {
        case .ack(let ack):
            try database.query("INSERT OR IGNORE INTO pending_acks (tracking_id, stage, payload, created) VALUES (?, ?, ?, ?)",
                               [.text(ack.trackingId), .text(ack.stage.rawValue), .text(String(decoding: ack.payload, as: UTF8.self)),
                                .integer(ack.created)])
        case .session(let trackingId, let state, let updated):
            try writeTrackingSession(trackingId, state: state, at: updated)
        case .deleteAck(let ack):
            try database.query("DELETE FROM pending_acks WHERE tracking_id = ? AND stage = ?",
                               [.text(ack.trackingId), .text(ack.stage.rawValue)])
        }
    }

    /// The stored acks, oldest first; rows that cannot be read are skipped.
    func pendingAcks() throws -> [PendingAck] {
        let rows = try database.query("SELECT tracking_id, stage, payload, created FROM pending_acks ORDER BY created, rowid")
        return rows.compactMap { row in
            guard row.count == 4, let trackingId = row[0], let stage = row[1].flatMap(TrackingStage.init(rawValue:)),
                  let text = row[2], let payload = try? JSONValue.parse(text),
                  let created = row[3].flatMap({ Int64($0) }) else { return nil }
            return PendingAck(trackingId: trackingId, stage: stage, payload: payload, created: created)
        }
    }

    /// The stored open sessions with their state; rows that cannot be read are skipped.
    func trackingSessions() throws -> [(trackingId: String, state: JSONValue)] {
        let rows = try database.query("SELECT tracking_id, state FROM tracking_sessions ORDER BY updated, rowid")
        return rows.compactMap { row in
            guard row.count == 2, let trackingId = row[0], let text = row[1],
                  let state = try? JSONValue.parse(text) else { return nil }
            return (trackingId, state)
        }
    }

    private func writeTrackingSession(_ trackingId: String, state: JSONValue?, at updated: Int64) throws {
        if let state {
            try database.query("""
                INSERT INTO tracking_sessions (tracking_id, state, updated) VALUES (?, ?, ?)
                ON CONFLICT(tracking_id) DO UPDATE SET state = excluded.state, updated = excluded.updated
                """, [.text(trackingId), .text(state.jsonText), .integer(updated)])
        } else {
            try database.query("DELETE FROM tracking_sessions WHERE tracking_id = ?", [.text(trackingId)])
        }
    }
}
