import CInteractiveShims
import IPCProtocol
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// Accepts local clients and serves each in its own task, up to `maxClients` at once.
struct IPCServer: Sendable {
    let listener: UnixListener
    let router: RequestRouter
    let roles: RolePolicy
    let maxClients: Int
    let subscriberQueueLimit: Int
    let log: Logger

    /// Accepts until cancelled; then every connection is closed.
    func run() async {
        IOReactor.shared.register(listener.fd)
        defer { IOReactor.shared.deregister(listener.fd) }
        let active = ClientCounter()
        await withDiscardingTaskGroup { group in
            var nextID = 1
            while !Task.isCancelled {
                let fd = interactive_accept_nonblocking(listener.fd)
                if fd < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK {
                        do { try await IOReactor.shared.waitReadable(listener.fd) } catch { break }
                    } else if errno == EMFILE || errno == ENFILE {
                        log.error("Out of file descriptors; not accepting for 100 ms")
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    continue
                }
                let peer = PeerCredentials.read(fd: fd)
                guard await active.tryEnter(limit: maxClients) else {
                    reject(fd: fd, peer: peer)
                    continue
                }
                let context = ClientContext(id: nextID, peer: peer, role: roles.role(for: peer),
                                            queue: OutboundQueue(eventLimit: subscriberQueueLimit, socket: fd))
                nextID += 1
                let connection = ClientConnection(context: context, fd: fd, router: router, log: log, bootId: router.bus.bootId)
                group.addTask {
                    await connection.run()
                    await active.leave()
                }
            }
        }
    }

    /// Over `maxClients`: one error line, then the connection is closed.
    private func reject(fd: Int32, peer: PeerCredentials?) {
        log.warning("Refused a local client: \(maxClients) clients already connected",
                    ["INTERACTIVE_CLIENT_PID": peer.map { String($0.pid) } ?? "unknown"], id: .clientRejected)
        let line = RPCResponse(id: .null, outcome: .failure(.daemon(.tooManyClients, "too many clients (maxClients is \(maxClients))"))).line()
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        close(fd)
    }
}

/// How many clients are connected.
actor ClientCounter {
    private(set) var count = 0

    func tryEnter(limit: Int) -> Bool {
        guard count < limit else { return false }
        count += 1
        return true
    }

    func leave() { count -= 1 }
}
