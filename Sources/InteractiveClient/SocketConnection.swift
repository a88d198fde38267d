import Dispatch
import IPCProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the daemon's socket: a non-blocking descriptor, a Dispatch read source on
/// the client's queue, and a write source only while the kernel refuses more bytes.
///
/// Not thread-safe, and not meant to be: only the client actor, whose executor is that queue,
/// holds and calls it.
final class SocketConnection {
    /// What a read found: the complete lines, and whether the connection ended.
    struct ReadResult {
        var lines: [[UInt8]] = []
        var closed = false
    }

    /// Bytes waiting for the kernel beyond which the daemon is taken as stuck.
    static let maxOutboundBytes = 16 << 20
    /// Reads per readiness notification, so a flood cannot hold the queue.
    private static let maxReadsPerWakeUp = 16

    private let fd: Int32
    private let queue: DispatchQueue
    private let readSource: DispatchSourceRead
    private var writeSource: DispatchSourceWrite?
    private let onWritable: @Sendable () -> Void
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var readBuffer = [UInt8](repeating: 0, count: 65536)
    private var outbound: [UInt8] = []
    private(set) var isOpen = true

    /// Connects to `path`; `onReadable` and `onWritable` run on `queue`.
    init(path: String, queue: DispatchQueue, onReadable: @escaping @Sendable () -> Void,
         onWritable: @escaping @Sendable () -> Void) throws(IPCClientError) {
        let fd = try UnixStreamSocket.connect(path: path, nonBlocking: true)
        self.fd = fd
        self.queue = queue
        self.onWritable = onWritable
        readSource = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        readSource.setEventHandler(handler: onReadable)
        // The descriptor is closed once the source no longer watches it.
        readSource.setCancelHandler { Glibc.close(fd) }
        readSource.resume()
    }

    deinit { close() }

    /// Reads what the kernel holds now.
    func readAvailable() -> ReadResult {
        var result = ReadResult()
        guard isOpen else {
            result.closed = true
            return result
        }
        for _ in 0..<Self.maxReadsPerWakeUp {
            let count = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                let frames = readBuffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                for case .line(let line) in frames { result.lines.append(line) }
                continue
            }
            if count < 0, errno == EINTR { continue }
            result.closed = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
            break
        }
        return result
    }

    /// Queues `bytes` and writes what the kernel accepts; false when the connection broke.
    func send(_ bytes: [UInt8]) -> Bool {
        guard isOpen else { return false }
        outbound.append(contentsOf: bytes)
        guard outbound.count <= Self.maxOutboundBytes else { return false }
        return flush()
    }

    /// Writes queued bytes until the kernel refuses more; false when the connection broke.
    func flush() -> Bool {
        guard isOpen else { return false }
        while !outbound.isEmpty {
            let written = outbound.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            if written > 0 {
                outbound.removeFirst(written)
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                return watchWritable()
            } else {
                return false
            }
        }
        writeSource?.cancel()
        writeSource = nil
        return true
    }

    /// Stops watching and closes the socket (the descriptor closes once the source let go of it).
    func close() {
        guard isOpen else { return }
        isOpen = false
        outbound = []
        writeSource?.cancel()
        writeSource = nil
        readSource.cancel()
    }

    /// A write source on a duplicate of the descriptor, so that each source closes its own.
    private func watchWritable() -> Bool {
        guard writeSource == nil else { return true }
        let duplicate = dup(fd)
        guard duplicate >= 0 else { return false }
        let source = DispatchSource.makeWriteSource(fileDescriptor: duplicate, queue: queue)
        source.setEventHandler(handler: onWritable)
        source.setCancelHandler { Glibc.close(duplicate) }
        source.resume()
        writeSource = source
        return true
    }
}
