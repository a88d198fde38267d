import IPCProtocol
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// One local client: reads requests line by line and answers them in order, and writes
/// replies and events from its queue. Bad input gets an error reply; the connection stays up.
struct ClientConnection: Sendable {
    let context: ClientContext
    let fd: Int32
    let router: RequestRouter
    let log: Logger
    let bootId: String

    /// Serves the client until it disconnects or the task is cancelled; closes the socket.
    func run() async {
        log.debug("Client connected as \(context.role.rawValue)", clientFields)
        let watched: WatchedDescriptor
        do {
            watched = try await WatchedDescriptor.watch(fd)
        } catch {
            log.warning("Cannot watch a client's socket: \(error)", clientFields)
            close(fd)
            return
        }
        // The reader ending (end of input) lets the writer drain what is queued; the writer
        // ending (the peer is gone, or it stopped reading its replies) stops the reader.
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await readLoop(watched)
                return true
            }
            group.addTask {
                await writeLoop(watched)
                return false
            }
            while let readerEnded = await group.next() {
                if readerEnded {
                    context.queue.close()
                } else {
                    group.cancelAll()
                }
            }
        }
        await router.bus.unsubscribe(connection: context.id)
        await router.rooms.clientDisconnected(context.id)
        context.queue.close()
        await watched.stopWatching()
        close(fd)
        // The trim walks the heap: a BlockingCall, not on the loop. Cancelled (the daemon stops):
        // the trim still runs, unawaited.
        if context.queue.peakBytes > MemoryRelease.threshold { try? await BlockingCall.run { MemoryRelease.giveBack() } }
        log.debug("Client disconnected", clientFields)
    }

    private func readLoop(_ watched: WatchedDescriptor) async {
        var framer = LineFramer()
        var rate = RequestRate()
        while !Task.isCancelled {
            // Read into the loop's one read buffer (the local API's tasks run on the loop): an idle
            // client holds only its partial line, not a buffer of its own.
            let (count, readError, frames) = EventLoop.shared.withReadBuffer { buffer -> (Int, Int32, [LineFramer.Frame]) in
                let count = read(fd, buffer.baseAddress, buffer.count)
                guard count > 0 else { return (count, errno, []) }
                return (count, 0, framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])))
            }
            if count > 0 {
                for frame in frames {
                    let wait = rate.take(at: .now)
                    if wait > .zero {
                        do { try await EventLoop.shared.sleep(for: wait) } catch { return }
                    }
                    await handle(frame)
                }
                if context.queue.overflowed {
                    log.warning("Client leaves its replies unread (over \(context.queue.replyByteLimit / 1024) KiB); disconnecting it",
                                clientFields)
                    // The writer may be parked on a full socket: shutting it down wakes both sides.
                    shutdown(fd, Int32(SHUT_RDWR))
                    return
                }
            } else if count == 0 {
                return
            } else if readError == EAGAIN || readError == EWOULDBLOCK {
                do { try await watched.readable() } catch { return }
            } else if readError != EINTR {
                return
            }
        }
    }

    private func handle(_ frame: LineFramer.Frame) async {
        switch frame {
        case .oversized:
            log.warning("Client sent a line over 1 MiB; discarded", clientFields)
            reply(RPCResponse(id: .null, outcome: .failure(.invalidRequest("line longer than 1 MiB"))))
        case .line(let line):
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
            switch RPCIncoming.decode(line: line) {
            case .failure(let failure):
                reply(RPCResponse(id: failure.id, idLiteral: failure.idLiteral, outcome: .failure(failure.error)))
            case .success(.request(let request)):
                if let line = await router.handle(request, from: context) { context.queue.pushReply(line) }
            case .success(.notification(let method, let params)):
                _ = await router.handle(RPCRequest(id: nil, method: method, params: params), from: context)
            case .success(.response):
                return  // The daemon sends no requests; a stray response is ignored.
            }
        }
    }

    private func reply(_ response: RPCResponse) { context.queue.pushReply(response.line()) }

    private var clientFields: [String: String] { context.logFields }

    private func writeLoop(_ watched: WatchedDescriptor) async {
        while let items = await context.queue.next() {
            var bytes: [UInt8] = []
            for item in items {
                switch item {
                case .line(let line): bytes.append(contentsOf: line)
                case .lagged(let missed): bytes.append(contentsOf: OutboundQueue.laggedLine(bootId: bootId, missed: missed))
                }
            }
            guard await write(bytes, watched) else {
                context.queue.close()
                return
            }
        }
    }

    /// Writes everything, waiting for the socket to drain; false when the peer is gone.
    private func write(_ bytes: [UInt8], _ watched: WatchedDescriptor) async -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                offset += written
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                do { try await watched.writable() } catch { return false }
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
