#if canImport(Glibc)
import Glibc
#endif

/// Why the store cannot be kept in the state directory at all, in words an operator can act on.
struct StoreError: Error, CustomStringConvertible {
    let description: String
}

/// The state directory and the files in it, checked with plain system calls (their errors
/// named, not numbered). A file in it is never followed when it is a symbolic link, and only a
/// regular file is ever opened, changed, renamed or scrubbed: a link planted there cannot make
/// the daemon touch a file outside the folder.
enum StateDirectory {
    /// What is at a path, the path itself (a symbolic link is not followed).
    enum Kind: Equatable {
        case missing, directory, regularFile
        /// Anything else (a symbolic link, a socket, a FIFO, a device): named for the message.
        case other(String)
    }

    static func kind(of path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        return kind(info.st_mode)
    }

    private static func kind(_ mode: mode_t) -> Kind {
        switch mode & S_IFMT {
        case S_IFDIR: return .directory
        case S_IFREG: return .regularFile
        case S_IFLNK: return .other("a symbolic link")
        case S_IFIFO: return .other("a FIFO")
        case S_IFSOCK: return .other("a socket")
        case S_IFCHR, S_IFBLK: return .other("a device")
        default: return .other("not a regular file")
        }
    }

    /// Creates `path` (and missing parents, mode 0750) unless it is a directory already (the
    /// folder itself may be a symbolic link to one).
    static func prepare(_ path: String) throws(StoreError) {
        var info = stat()
        switch stat(path, &info) == 0 ? kind(info.st_mode) : StateDirectory.kind(of: path) {
        case .directory:
            return
        case .regularFile:
            throw StoreError(description: "the state directory \(path) is a file, not a directory")
        case .other(let what):
            throw StoreError(description: "the state directory \(path) is \(what), not a directory")
        case .missing:
            let parent = parentPath(of: path)
            if parent != path && kind(of: parent) == .missing { try prepare(parent) }
            guard mkdir(path, 0o750) == 0 || (errno == EEXIST && stat(path, &info) == 0 && kind(info.st_mode) == .directory) else {
                throw StoreError(description: "cannot create the state directory \(path): \(errorText())")
            }
        }
    }

    /// Why the folder cannot be trusted with the store, nil when it can: another user may
    /// write in it (it is group- or world-writable, or owned by a user other than the daemon's
    /// and root), so it could plant links or a store of its own (a runtime configuration
    /// pointing the daemon at another backend, a session). A folder on a read-only file system
    /// can be written by nobody.
    static func unsafeReason(_ path: String) -> String? {
        var info = stat()
        var volume = statvfs()
        guard stat(path, &info) == 0 else { return nil }
        if statvfs(path, &volume) == 0, volume.f_flag & UInt(ST_RDONLY) != 0 { return nil }
        if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            return "the state directory \(path) is writable by others (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        if info.st_uid != geteuid() && info.st_uid != 0 {
            return "the state directory \(path) belongs to another user (uid \(info.st_uid))"
        }
        return nil
    }

    /// Whether new files can be made in `path` (false on a read-only file system or without permission).
    static func isWritable(_ path: String) -> Bool { access(path, W_OK) == 0 }

    /// Renames the regular file `path` to `target`; anything else is left where it is.
    static func move(_ path: String, to target: String) throws(StoreError) {
        guard kind(of: path) == .regularFile else {
            throw StoreError(description: "\(path) is not a regular file; not moved")
        }
        guard rename(path, target) == 0 else {
            throw StoreError(description: "cannot move \(path) to \(target): \(errorText())")
        }
    }

    /// Opens the regular file `path` without following a symbolic link; nil (errno set) for
    /// anything else. The caller closes the descriptor.
    static func openRegularFile(_ path: String, _ flags: Int32) -> Int32? {
        let descriptor = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            errno = EINVAL
            return nil
        }
        return descriptor
    }

    /// Gives the regular file `path` mode 0600 (through its descriptor: a link is never followed).
    static func restrictToOwner(_ path: String) {
        guard let descriptor = openRegularFile(path, O_RDONLY) else { return }
        fchmod(descriptor, 0o600)
        close(descriptor)
    }

    /// The size of a regular file, nil when there is none.
    static func size(of path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// The first `count` bytes of a regular file (fewer when it is shorter); nil when it cannot be read.
    static func prefix(of path: String, count: Int) -> [UInt8]? {
        guard let descriptor = openRegularFile(path, O_RDONLY) else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, count) }
        guard got >= 0 else { return nil }
        return Array(bytes.prefix(got))
    }

    /// The names in the folder (not `.` and `..`); empty when it cannot be read.
    static func names(in path: String) -> [String] {
        guard let folder = opendir(path) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func parentPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
