#if canImport(Glibc)
import Glibc
#endif

/// Where the media process `interactived-voice` is: next to the daemon's own executable (a
/// build folder, /usr/local/bin), else in `../libexec/interactived/` from it (the package:
/// /usr/sbin/interactived and /usr/libexec/interactived/interactived-voice).
enum VoiceMediaExecutable {
    static let name = "interactived-voice"

    /// The places looked at, in order, for a daemon at `daemon` (its absolute path).
    static func candidates(daemon: String) -> [String] {
        let folder = daemon.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let parent = folder.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return ["\(folder)/\(name)", "\(parent)/libexec/interactived/\(name)"]
    }

    /// The first executable candidate for this process, or why there is none.
    static func locate() -> Result<String, VoiceMediaStartError> {
        guard let daemon = ownExecutable() else { return .failure(VoiceMediaStartError("cannot read /proc/self/exe")) }
        let places = candidates(daemon: daemon)
        guard let found = places.first(where: { access($0, X_OK) == 0 }) else {
            return .failure(VoiceMediaStartError("\(name) is not installed (looked for \(places.joined(separator: " and ")))"))
        }
        return .success(found)
    }

    private static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
