import CInteractiveShims
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// The process signals the daemon acts on.
public enum ProcessSignal: Int32, Sendable {
    case terminate = 15  // SIGTERM
    case interrupt = 2  // SIGINT
    case hangup = 1  // SIGHUP
}

/// Turns SIGTERM, SIGINT and SIGHUP into an async stream.
///
/// A `sigaction` handler writes each signal to a pipe that the event loop watches. Unlike
/// signalfd (and dispatch signal sources on Linux), this works whatever signal mask the
/// daemon inherited, as long as one thread accepts the signal: the calling thread unblocks them.
public enum SignalStream {
    /// Why the signals cannot be watched (the daemon then refuses to start: it could not be stopped).
    public struct SetupError: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "cannot watch SIGTERM, SIGINT and SIGHUP: \(reason)" }
    }

    public static func make() async throws(SetupError) -> AsyncStream<ProcessSignal> {
        signal(SIGPIPE, SIG_IGN)
        let watched = [ProcessSignal.terminate, .interrupt, .hangup].map(\.rawValue)
        let fd = watched.withUnsafeBufferPointer { interactive_signal_pipe($0.baseAddress, Int32($0.count)) }
        guard fd >= 0 else { throw SetupError(reason: String(cString: strerror(-fd))) }
        let (stream, continuation) = AsyncStream<ProcessSignal>.makeStream()
        // The loop reads the pipe itself whenever it is readable: no task is needed.
        let registered: String? = await withCheckedContinuation { done in
            EventLoop.shared.execute {
                do {
                    try EventLoop.shared.register(fd) { _ in
                        var buffer = [UInt8](repeating: 0, count: 16)
                        while true {
                            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                            if count > 0 {
                                for byte in buffer[0..<count] {
                                    if let signal = ProcessSignal(rawValue: Int32(byte)) { continuation.yield(signal) }
                                }
                            } else if count < 0 && errno == EINTR {
                                continue
                            } else {
                                return
                            }
                        }
                    }
                    done.resume(returning: nil)
                } catch {
                    done.resume(returning: "\(error)")
                }
            }
        }
        if let registered { throw SetupError(reason: registered) }
        return stream
    }
}
