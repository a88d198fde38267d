#if canImport(Glibc)
import Glibc
#endif

/// Erases the viewer's session from a store moved aside (damaged, another program's, or its
/// write-ahead log): SQLite may not even open such a file, so the session's text is found in the
/// bytes (`"token":"…"`, and the user's id and name) and overwritten with `*` in place. Only a
/// regular file is opened, never through a symbolic link.
enum SessionScrub {
    /// The members of the kept session (`ViewerSession.stored`) whose string values are erased.
    static let members = ["token", "userId", "displayName"]
    /// A larger file is not read (a store is far smaller).
    static let maxFileBytes = 64 << 20

    /// Erases the session's values in the regular file `path`; returns how many it erased, nil
    /// when the file cannot be read or written.
    @discardableResult
    static func scrub(_ path: String) -> Int? {
        guard let size = StateDirectory.size(of: path), size <= maxFileBytes,
              let descriptor = StateDirectory.openRegularFile(path, O_RDWR) else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: size)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        guard got == size else { return nil }
        let original = bytes
        let erased = erase(in: &bytes)
        guard erased > 0 else { return 0 }
        // Only the bytes that changed are written back.
        var start: Int?
        for index in 0...bytes.count {
            let changed = index < bytes.count && bytes[index] != original[index]
            if changed, start == nil { start = index }
            if !changed, let from = start {
                let written = bytes[from..<index].withUnsafeBytes { pwrite(descriptor, $0.baseAddress, index - from, off_t(from)) }
                guard written == index - from else { return nil }
                start = nil
            }
        }
        guard fsync(descriptor) == 0 else { return nil }
        return erased
    }

    /// Overwrites with `*` every string value of a session member in `bytes` (JSON text as the
    /// store keeps it: `"token":"…"`, escapes included); returns how many values it erased.
    static func erase(in bytes: inout [UInt8]) -> Int {
        var erased = 0
        for member in members {
            let pattern = Array("\"\(member)\":\"".utf8)
            var index = 0
            while let found = firstIndex(of: pattern, in: bytes, from: index) {
                var position = found + pattern.count
                while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                    let escaped = bytes[position] == UInt8(ascii: "\\") && position + 1 < bytes.count
                    bytes[position] = UInt8(ascii: "*")
                    if escaped {
                        position += 1
                        bytes[position] = UInt8(ascii: "*")
                    }
                    position += 1
                }
                erased += 1
                index = position
            }
        }
        return erased
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            guard let candidate = bytes[index...].firstIndex(of: first), candidate <= bytes.count - pattern.count else { return nil }
            if bytes[candidate..<candidate + pattern.count].elementsEqual(pattern) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}
