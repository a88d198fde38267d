import JSONValue

/// Where an `emit-ack` payload's two send-time members are in its text: `clientContext.ackLatencyMs`
/// (from the stage's moment to the sending) and `clientContext.timeline.ackSent`. An ack that goes
/// out later than decided (it waited for its store write or for a connection) gets them patched
/// in its text instead of the payload being parsed and written again.
struct AckStamps: Sendable, Equatable {
    /// The value ranges in the text, `latency` before `ackSent`.
    private(set) var latency = 0..<0
    private(set) var ackSent = 0..<0
    /// The moment `ackLatencyMs` runs from (the stage's own).
    private(set) var latencyFrom: Int64 = 0

    /// Writes `ackLatencyMs` (`ackSent − from`; null when it does not fit) and notes where.
    mutating func writeLatency(from: Int64, ackSent: Int64, to writer: inout JSONWriter) {
        latencyFrom = from
        writer.key("ackLatencyMs")
        let start = writer.offset
        if let latency = TrackingSession.difference(ackSent, from) { writer.integer(latency) } else { writer.null() }
        latency = start..<writer.offset
    }

    /// Writes `ackSent` and notes where.
    mutating func writeAckSent(_ moment: Int64, to writer: inout JSONWriter) {
        writer.key("ackSent")
        let start = writer.offset
        writer.integer(moment)
        ackSent = start..<writer.offset
    }

    /// `text` with both members as of `sentAt`; nil when the ranges do not fit the text.
    func restamped(_ text: [UInt8], sentAt: Int64) -> [UInt8]? {
        guard latency.upperBound <= ackSent.lowerBound, ackSent.upperBound <= text.count, !latency.isEmpty, !ackSent.isEmpty else {
            return nil
        }
        var stamped: [UInt8] = []
        stamped.reserveCapacity(text.count + 8)
        stamped.append(contentsOf: text[..<latency.lowerBound])
        if let value = TrackingSession.difference(sentAt, latencyFrom) {
            JSONValue.writeInteger(value, to: &stamped)
        } else {
            stamped.append(contentsOf: "null".utf8)
        }
        stamped.append(contentsOf: text[latency.upperBound..<ackSent.lowerBound])
        JSONValue.writeInteger(sentAt, to: &stamped)
        stamped.append(contentsOf: text[ackSent.upperBound...])
        return stamped
    }
}
