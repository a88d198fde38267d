// Experiment for Benchmarks/README.md (copied into a throw-away copy of the package by
// foundation-essentials.sh, never built by SwiftPM from here): stand-ins for the few
// Foundation-only APIs the daemon uses, so that it builds with FoundationEssentials alone.
import FoundationEssentials
import Glibc

struct CharSetStub: Sendable {
    let chars: Set<Character>
    static let whitespaces = CharSetStub(chars: [" ", "\t"])
    static let whitespacesAndNewlines = CharSetStub(chars: [" ", "\t", "\n", "\r"])
}

extension StringProtocol {
    func trimmingCharacters(in set: CharSetStub) -> String {
        var s = Substring(self)
        while let f = s.first, set.chars.contains(f) { s.removeFirst() }
        while let l = s.last, set.chars.contains(l) { s.removeLast() }
        return String(s)
    }

    func range(of needle: String) -> Range<String.Index>? {
        let text = String(self)
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) { return index..<text.index(index, offsetBy: needle.count) }
            index = text.index(after: index)
        }
        return nil
    }
}

func NSHomeDirectory() -> String { getenv("HOME").map { String(cString: $0) } ?? "/" }

func essentialsParentFolder(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
}

final class FileHandle: Sendable {
    static let standardError = FileHandle()
    func write(_ data: Data) { data.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) } }
}

final class Thread: @unchecked Sendable {
    let block: @Sendable () -> Void
    var name: String?
    init(block: @escaping @Sendable () -> Void) { self.block = block }
    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let me = Unmanaged<Thread>.fromOpaque(raw).takeRetainedValue()
            me.block()
            return nil
        }, context)
    }
}
