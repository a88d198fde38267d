/// Splits a byte stream into newline-terminated lines, with a limit on line length.
///
/// Bytes may arrive in any chunking: several lines in one read, one line across many reads.
/// A line longer than `maxLineBytes` is reported once as `.oversized`, and the rest of it, up
/// to its newline, is discarded without being buffered.
public struct LineFramer: Sendable {
    public enum Frame: Sendable, Equatable {
        /// One line, without its newline (a trailing `\r` is kept: JSON ignores it as white space).
        case line([UInt8])
        /// A line over the limit; it was discarded.
        case oversized
    }

    /// The default limit of the local API: 1 MiB.
    public static let defaultMaxLineBytes = 1 << 20
    /// The buffer of a partial line is kept for the next one up to this capacity.
    static let keptCapacity = 4096

    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maxLineBytes: Int = LineFramer.defaultMaxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes held for an incomplete line.
    public var bufferedByteCount: Int { pending.count }

    /// Feeds bytes; returns the frames completed by them, in order.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) -> [Frame] {
        var frames: [Frame] = []
        var start = 0
        let count = bytes.count
        while start < count {
            let newline = bytes[start..<count].firstIndex(of: 0x0A)
            let end = newline ?? count
            if discarding {
                if newline != nil { discarding = false }
            } else if pending.count + (end - start) > maxLineBytes {
                pending.removeAll(keepingCapacity: false)
                frames.append(.oversized)
                discarding = newline == nil
            } else if let newline {
                if pending.isEmpty {
                    frames.append(.line(Array(bytes[start..<newline])))
                } else {
                    pending.append(contentsOf: bytes[start..<newline])
                    frames.append(.line(pending))
                    // A long line's buffer is not kept: an idle connection holds little.
                    pending.removeAll(keepingCapacity: pending.capacity <= Self.keptCapacity)
                }
            } else {
                pending.append(contentsOf: bytes[start..<end])
            }
            start = end + 1
        }
        return frames
    }

    /// Feeds bytes; returns the frames completed by them, in order.
    public mutating func append(_ bytes: [UInt8]) -> [Frame] {
        bytes.withUnsafeBytes { append($0) }
    }
}
