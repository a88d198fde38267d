import JSONValue

/// The framing of the protocol: one JSON object a line, UTF-8, `\n`-terminated, at most
/// `maxLineBytes` a line (without its newline).
public enum VoiceMediaLine {
    /// 256 KiB.
    public static let maxLineBytes = 256 * 1024

    /// `message` as one line, newline included.
    public static func encode(_ message: JSONValue) -> [UInt8] {
        var line = message.serialized()
        line.append(0x0A)
        return line
    }
}

/// Cuts the received byte stream into lines and parses each as JSON. A line over the limit or
/// not JSON is a protocol error: the caller closes the socket and discards the decoder.
public struct VoiceMediaLineDecoder: Sendable {
    private var pending: [UInt8] = []
    private let maxLineBytes: Int

    public init(maxLineBytes: Int = VoiceMediaLine.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    /// Feeds received bytes; returns the JSON values of the lines they complete, in order.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(VoiceMediaProtocolError) -> [JSONValue] {
        pending.append(contentsOf: bytes)
        var values: [JSONValue] = []
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            guard newline - start <= maxLineBytes else { throw overLimit() }
            let line = pending[start..<newline]
            do {
                values.append(try JSONValue.parse(line))
            } catch {
                throw VoiceMediaProtocolError("a line is not JSON: \(error)")
            }
            start = newline + 1
        }
        pending.removeSubrange(pending.startIndex..<start)
        guard pending.count <= maxLineBytes else { throw overLimit() }
        return values
    }

    private func overLimit() -> VoiceMediaProtocolError {
        VoiceMediaProtocolError("a line is over \(maxLineBytes) bytes")
    }
}
