#if canImport(Glibc)
import Glibc
#endif

/// Why the store cannot be kept in the state directory at all, in words an operator can act on.
struct StoreError: Error, CustomStringConvertible {
    let description: String
}

/// The state directory and the files in it, checked with plain system calls (their errors
/// named, not numbered).
enum StateDirectory {
    /// What is at a path.
    enum Kind: Equatable {
        case missing, directory, regularFile
        /// Anything else (a socket, a FIFO, a device): named for the message.
        case other(String)
    }

    static func kind(of path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .regularFile
        case S_IFLNK:
            // A symbolic link counts as what it points to.
            guard stat(path, &info) == 0 else { return .other("a dangling symbolic link") }
            return (info.st_mode & S_IFMT) == S_IFDIR ? .directory : (info.st_mode & S_IFMT) == S_IFREG ? .regularFile
                : .other("a symbolic link to a special file")
        case S_IFIFO: return .other("a FIFO")
        case S_IFSOCK: return .other("a socket")
        case S_IFCHR, S_IFBLK: return .other("a device")
        default: return .other("not a regular file")
        }
    }

    /// Creates `path` (and missing parents, mode 0750) unless it is a directory already.
    static func prepare(_ path: String) throws(StoreError) {
        switch kind(of: path) {
        case .directory:
            return
        case .regularFile:
            throw StoreError(description: "the state directory \(path) is a file, not a directory")
        case .other(let what):
            throw StoreError(description: "the state directory \(path) is \(what), not a directory")
        case .missing:
            let parent = parentPath(of: path)
            if parent != path && kind(of: parent) == .missing { try prepare(parent) }
            guard mkdir(path, 0o750) == 0 || (errno == EEXIST && kind(of: path) == .directory) else {
                throw StoreError(description: "cannot create the state directory \(path): \(errorText())")
            }
        }
    }

    /// Whether new files can be made in `path` (false on a read-only file system or without permission).
    static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// Renames `path` to `target`.
    static func move(_ path: String, to target: String) throws(StoreError) {
        guard rename(path, target) == 0 else {
            throw StoreError(description: "cannot move \(path) to \(target): \(errorText())")
        }
    }

    /// The size of a regular file, nil when there is none.
    static func size(of path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// The first `count` bytes of a file (fewer when it is shorter); nil when it cannot be read.
    static func prefix(of path: String, count: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, count) }
        guard got >= 0 else { return nil }
        return Array(bytes.prefix(got))
    }

    static func parentPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
