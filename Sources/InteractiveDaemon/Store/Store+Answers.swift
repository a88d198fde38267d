import JSONValue

/// Answered timelines per viewer and media, and cached predict results, kept for 30 days and
/// 10,000 rows of each at most (`prune`, at start and daily).
extension Store {
    /// How long an answered timeline or a predict result is kept.
    static let keptForMs: Int64 = 30 * 86_400_000
    /// The most rows of each table kept; past it the oldest go.
    static let maxKeptRows = 10_000

    /// Deletes the answered timelines and predict results older than `keptForMs` at `nowMs`,
    /// then all but the newest `maxKeptRows` of each; returns how many rows went.
    @discardableResult
    func prune(nowMs: Int64) async throws -> Int {
        try await recordingHealth {
            var removed = 0
            for table in ["answered", "predict_results"] {
                try database.query("DELETE FROM \(table) WHERE at < ?", [.integer(nowMs - Self.keptForMs)])
                removed += database.changes
                try database.query("DELETE FROM \(table) WHERE rowid IN (SELECT rowid FROM \(table) ORDER BY at DESC LIMIT -1 OFFSET ?)",
                                   [.integer(Int64(Self.maxKeptRows))])
                removed += database.changes
            }
            return removed
        }
    }

    /// Timelines `viewer` answered for `media`.
    func answeredTimelines(viewer: String, media: String) throws -> Set<String> {
        let rows = try database.query("SELECT timeline FROM answered WHERE viewer = ? AND media = ?", [.text(viewer), .text(media)])
        return Set(rows.compactMap { $0.first ?? nil })
    }

    func markAnswered(viewer: String, media: String, timeline: String) async throws {
        try await recordingHealth {
            try database.query("INSERT OR IGNORE INTO answered (viewer, media, timeline, at) VALUES (?, ?, ?, ?)",
                               [.text(viewer), .text(media), .text(timeline), .integer(Timestamp.nowMs())])
        }
    }

    /// The last `predict-result` of a timeline.
    func predictResult(timeline: String) throws -> JSONValue? {
        let rows = try database.query("SELECT payload FROM predict_results WHERE timeline = ?", [.text(timeline)])
        guard let text = rows.first?.first ?? nil else { return nil }
        return try? JSONValue.parse(text)
    }

    func savePredictResult(timeline: String, _ payload: JSONValue) async throws {
        try await recordingHealth {
            try database.query("""
            INSERT INTO predict_results (timeline, payload, at) VALUES (?, ?, ?)
            ON CONFLICT(timeline) DO UPDATE SET payload = excluded.payload, at = excluded.at
            """, [.text(timeline), .text(payload.jsonText), .integer(Timestamp.nowMs())])
        }
    }
}
