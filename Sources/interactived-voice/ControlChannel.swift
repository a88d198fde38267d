import JSONValue
import Runtime
import VoiceMediaProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The media process's end of the daemon's socket pair: JSON lines in, JSON lines out.
final class ControlChannel: Sendable {
    private let watched: WatchedDescriptor

    private init(watched: WatchedDescriptor) {
        self.watched = watched
    }

    /// Takes over `fd`: non-blocking, close-on-exec (GStreamer's helpers must not inherit it).
    static func open(fd: Int32) async throws -> ControlChannel {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
            throw ControlChannelError(reason: "fd \(fd) is not open: \(String(cString: strerror(errno)))")
        }
        return ControlChannel(watched: try await WatchedDescriptor.watch(fd))
    }

    /// Reads messages until the socket closes, fails, breaks the protocol or the task is
    /// cancelled, posting each as `.daemon`, and the end as `.controlClosed` or `.protocolViolation`.
    /// Unknown types and fields are logged once each.
    func receive(into mailbox: Mailbox<MediaSession.Input>) async {
        var decoder = VoiceMediaLineDecoder()
        var logged: Set<String> = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !Task.isCancelled {
            let count = buffer.withUnsafeMutableBytes { recv(watched.fd, $0.baseAddress, $0.count, 0) }
            if count == 0 {
                mailbox.send(.controlClosed)
                return
            }
            if count < 0 {
                switch errno {
                case EINTR: continue
                case EAGAIN:
                    do { try await watched.readable() } catch { return }
                    continue
                default:
                    mailbox.send(.controlClosed)
                    return
                }
            }
            do {
                for json in try decoder.append(buffer[0..<count]) {
                    switch try DaemonMessage.received(from: json) {
                    case .message(let message, let ignored):
                        for field in ignored where logged.insert("field \(field)").inserted { Log.line("ignoring unknown field \(field)") }
                        mailbox.send(.daemon(message))
                    case .unknownType(let type):
                        if logged.insert("type \(type)").inserted { Log.line("ignoring messages of unknown type \(type)") }
                    }
                }
            } catch {
                mailbox.send(.protocolViolation(error.reason))
                return
            }
        }
    }

    /// Writes `message` as one line, waiting while the socket is full. False when the daemon's
    /// end is gone.
    func send(_ message: MediaMessage) async -> Bool {
        let line = VoiceMediaLine.encode(message.json)
        var offset = 0
        while offset < line.count {
            let written = line.withUnsafeBytes { Glibc.send(watched.fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && errno == EAGAIN {
                do { try await watched.writable() } catch { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Stops watching and closes the socket: the daemon sees its end.
    func close() async {
        await watched.stopWatching()
        _ = Glibc.close(watched.fd)
    }
}

struct ControlChannelError: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
