import JSONValue

/// Answered timelines per viewer and media, and cached predict results.
extension Store {
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
