/// The 32-byte header of an SQLite write-ahead log (sqlite.org/fileformat.html, "WAL File Format").
///
/// SQLite ignores a log whose header is not valid, silently losing every transaction in it; the
/// store checks the header first, moves a damaged log aside and says so.
enum WALHeader {
    static let size = 32

    /// Whether `bytes` (the log's start) is a valid header. An empty log is not damaged; one
    /// shorter than a header, or with a wrong magic number, version or checksum, is.
    static func isIntact(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty { return true }
        guard bytes.count >= size else { return false }
        let magic = word(bytes, at: 0, bigEndian: true)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return false }
        guard word(bytes, at: 4, bigEndian: true) == 3_007_000 else { return false }
        // The checksum of the first 24 bytes, in the byte order the magic number names.
        let bigEndian = magic & 1 == 1
        var first: UInt32 = 0
        var second: UInt32 = 0
        for offset in stride(from: 0, to: 24, by: 8) {
            first = first &+ word(bytes, at: offset, bigEndian: bigEndian) &+ second
            second = second &+ word(bytes, at: offset + 4, bigEndian: bigEndian) &+ first
        }
        return first == word(bytes, at: 24, bigEndian: true) && second == word(bytes, at: 28, bigEndian: true)
    }

    private static func word(_ bytes: [UInt8], at offset: Int, bigEndian: Bool) -> UInt32 {
        let value = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return bigEndian ? value : value.byteSwapped
    }
}
