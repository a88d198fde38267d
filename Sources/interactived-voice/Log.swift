#if canImport(Glibc)
import Glibc
#endif

/// Readable lines on stderr, which the daemon sends to its own log target. Never a secret: no
/// SDP (it holds ICE credentials), no TURN URL.
enum Log {
    static func line(_ message: String) {
        var bytes = Array("interactived-voice: \(message)\n".utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(2, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
