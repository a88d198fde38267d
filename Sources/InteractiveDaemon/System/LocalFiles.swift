import Glibc

/// The few file-system and process calls the daemon makes outside its store, on Glibc directly:
/// the daemon links no Foundation, whose pages would add to its resident size (linker/README.md).
public enum LocalFiles {
    /// The longest file `contents(atPath:)` reads (configuration, os-release); a longer one is refused.
    static let readLimit = 1 << 20

    /// The bytes of the regular file at `path`; nil when it cannot be opened, is not a regular
    /// file, cannot be read or is longer than `readLimit`.
    static func contents(atPath path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            guard bytes.count + count <= readLimit else { return nil }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Whether anything (a file, a folder, a socket) exists at `path`.
    static func exists(atPath path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Creates the folder `path` and its missing parents with `mode`; an existing folder is fine.
    /// False when one could not be made.
    @discardableResult
    static func makeFolders(atPath path: String, mode: mode_t = 0o755) -> Bool {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, mode) != 0, errno != EEXIST { return false }
            prefix += "/"
        }
        return true
    }

    /// The process's environment (`environ`); for a name given twice, the first value.
    public static func environment() -> [String: String] {
        var values: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                if values[name] == nil { values[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return values
    }
}
