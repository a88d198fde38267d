import IPCProtocol
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// One local client: reads requests line by line and answers them in order, and writes
/// replies and events from its queue. Bad input gets an error reply; the connection stays up.
@LoopActor
struct ClientConnection {
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
        // A stop by the budget for all local clients wakes a writer parked on a full socket.
        context.queue.onStop { [fd] in _ = shutdown(fd, Int32(SHUT_RDWR)) }
        context.queue.writeDirectly(to: fd)
        // The reader ending (end of input) lets the writer drain what is queued; the writer
        // ending (the peer is gone, or it stopped reading its replies) stops the reader.
        // Both on the loop: a child task's closure is not isolated unless it says so, and a
        // writer on the pool would cost every event two thread hand-offs.
        let reader: @LoopActor @Sendable () async -> Bool = {
            await readLoop(watched)
            return true
        }
        let writer: @LoopActor @Sendable () async -> Bool = {
            await writeLoop(watched)
            return false
        }
        await withTaskGroup(of: Bool.self) { group in
            group.addTask(operation: reader)
            group.addTask(operation: writer)
            while let readerEnded = await group.next() {
                if readerEnded {
                    context.queue.close()
                } else {
                    group.cancelAll()
                }
            }
        }
        router.bus.unsubscribe(connection: context.id)
        router.rooms.clientDisconnected(context.id)
        if case .overBudget(let bytes, let limit)? = context.queue.stopReason {
            log.warning("Client disconnected: local clients held more than the daemon keeps for them all "
                        + "(\(limit >> 10) KiB), this one \(bytes >> 10) KiB", clientFields)
        }
        context.queue.detach()  // before the close: the budget never interrupts a closed descriptor
        await watched.stopWatching()
        close(fd)
        // The trim walks the heap: a BlockingCall, not on the loop. Cancelled (the daemon stops):
        // the trim still runs, unawaited.
        if context.queue.peakBytes > MemoryRelease.threshold { try? await BlockingCall.run { MemoryRelease.giveBack() } }
        log.debug("Client disconnected", clientFields)
    }

    private func readLoop(_ watched: WatchedDescriptor) async {
        var framer = LineFramer(maxLineBytes: context.role == .observer ? Self.observerLineBytes : LineFramer.defaultMaxLineBytes)
        var rate = RequestRate()
        while !Task.isCancelled {
            // Read into the loop's one read buffer: an idle client holds only its partial line,
            // not a buffer of its own.
            let (count, readError, frames) = EventLoop.shared.withReadBuffer { buffer -> (Int, Int32, [LineFramer.Frame]) in
                let count = read(fd, buffer.baseAddress, buffer.count)
                guard count > 0 else { return (count, errno, []) }
                return (count, 0, framer.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count])))
            }
            if count > 0 {
                // What was read and is not handled yet (the request rate may hold it) is held
                // for the client too, as is its partial line: both count against the budget.
                var unhandled = frames.reduce(0) { $0 + Self.size(of: $1) }
                context.queue.receiving(framer.bufferedByteCount + unhandled)
                for frame in frames {
                    // A stop (the daemon's, or this client's: cut off, or over the budget) ends
                    // the requests read and not handled yet: their replies would go nowhere.
                    guard !Task.isCancelled, context.queue.stopReason == nil else { break }
                    let wait = rate.take(at: .now)
                    if wait > .zero {
                        do { try await EventLoop.shared.sleep(for: wait) } catch { return }
                    }
                    await handle(frame, limit: framer.maxLineBytes)
                    unhandled -= Self.size(of: frame)
                    context.queue.receiving(framer.bufferedByteCount + unhandled)
                }
                if context.queue.overflowed {
                    log.warning("Client leaves its replies unread (over \(context.queue.replyByteLimit / 1024) KiB); disconnecting it",
                                clientFields)
                    // The writer may be parked on a full socket: shutting it down wakes both sides.
                    shutdown(fd, Int32(SHUT_RDWR))
                    return
                }
                if context.queue.stopReason != nil { return }  // stopped by the budget, its socket shut down
            } else if count == 0 {
                return
            } else if readError == EAGAIN || readError == EWOULDBLOCK {
                do { try await watched.readable() } catch { return }
            } else if readError != EINTR {
                return
            }
        }
    }

    private static func size(of frame: LineFramer.Frame) -> Int {
        if case .line(let line) = frame { return line.count }
        return 0
    }

    /// The longest request line of an observer: its methods take a few short parameters.
    static let observerLineBytes = 64 * 1024

    private func handle(_ frame: LineFramer.Frame, limit: Int) async {
        switch frame {
        case .oversized:
            let size = limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
            log.warning("Client sent a line over \(size); discarded", clientFields)
            reply(RPCResponse(id: .null, outcome: .failure(.invalidRequest("line longer than \(size)"))))
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

    private var clientFields: LogFields { context.logFields }

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
            context.queue.written()
        }
    }

    /// Writes everything, waiting for the socket to drain; false when the peer is gone.
    private func write(_ bytes: [UInt8], _ watched: WatchedDescriptor) async -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Self.sendOnce(bytes[offset...], to: fd)
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

extension ClientConnection {
    /// One `send` of `bytes` on the non-blocking socket `fd`, without SIGPIPE: the count written,
    /// or -1 with `errno` set.
    nonisolated static func sendOnce(_ bytes: ArraySlice<UInt8>, to fd: Int32) -> Int {
        bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
