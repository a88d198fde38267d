import CInteractiveShims
import IPCProtocol
import JSONValue
import Runtime
#if canImport(Glibc)
import Glibc
#endif

/// Accepts local clients and serves each in its own task, up to `maxClients` at once.
@LoopActor
struct IPCServer {
    let listener: UnixListener
    let router: RequestRouter
    let roles: RolePolicy
    let maxClients: Int
    let subscriberQueueLimit: Int
    let log: Logger
    /// The bytes all local connections may leave unread together.
    let budget = ClientMemoryBudget()

    /// Accepts until cancelled; then every connection is closed. Its tasks (one per client) are
    /// isolated to the loop actor: requests and replies take no thread hop, and the clients read
    /// into the loop's one read buffer.
    func run() async {
        let watched: WatchedDescriptor
        do {
            watched = try await WatchedDescriptor.watch(listener.fd)
        } catch {
            log.error("Cannot watch the local socket: \(error)")
            return
        }
        let admission = AdmissionBox(ConnectionAdmission(maxClients: maxClients))
        await withDiscardingTaskGroup { group in
            var nextID = 1
            while !Task.isCancelled {
                let fd = interactive_accept_nonblocking(listener.fd)
                if fd < 0 {
                    let failure = errno
                    switch failure {
                    case EAGAIN, EWOULDBLOCK:
                        do { try await watched.readable() } catch { break }
                    case EINTR, ECONNABORTED:
                        continue  // that connection is gone; the next may be waiting
                    case EBADF, EINVAL, ENOTSOCK:
                        log.error("The local socket cannot accept any more (\(String(cString: strerror(failure)))); not serving clients")
                        return
                    default:
                        // EMFILE, ENFILE, ENOBUFS, ENOMEM, …: wait instead of spinning on the loop.
                        log.error("Cannot accept a local client (\(String(cString: strerror(failure)))); not accepting for 100 ms")
                        try? await EventLoop.shared.sleep(for: .milliseconds(100))
                    }
                    continue
                }
                let peer = PeerCredentials.read(fd: fd)
                let role = roles.role(for: peer)
                if let refusal = admission.admit(role: role, uid: peer?.uid) {
                    reject(fd: fd, peer: peer, refusal: refusal)
                    continue
                }
                let context = ClientContext(id: nextID, peer: peer, role: role, queue: queue(for: nextID, role: role))
                nextID += 1
                let connection = ClientConnection(context: context, fd: fd, router: router, log: log, bootId: router.bus.bootId)
                let serve: @LoopActor () async -> Void = {
                    await connection.run()
                    admission.leave(uid: peer?.uid, role: role)
                }
                group.addTask(operation: serve)
            }
        }
        await watched.stopWatching()
    }

    /// What a connection of `role` may leave unread (docs/ipc.md, "Limits"): a control client
    /// 1 MiB of replies and 128 KiB of events, an observer far less; all of them together
    /// `budget.limit`.
    private func queue(for id: Int, role: ClientRole) -> OutboundQueue {
        switch role {
        case .control:
            return OutboundQueue(id: id, eventLimit: subscriberQueueLimit, budget: budget)
        case .observer:
            return OutboundQueue(id: id, isObserver: true, eventLimit: subscriberQueueLimit, eventByteLimit: Self.observerEventBytes,
                                 replyByteLimit: Self.observerReplyBytes, budget: budget)
        }
    }

    /// An observer's share: 128 KiB of replies and 64 KiB of events.
    static let observerReplyBytes = 128 * 1024
    static let observerEventBytes = 64 * 1024

    /// A connection not let in: one error line saying why, then it is closed.
    private func reject(fd: Int32, peer: PeerCredentials?, refusal: ConnectionAdmission.Refusal) {
        let why: String
        switch refusal {
        case .full: why = "too many clients (maxClients is \(maxClients))"
        case .reservedForControl: why = "too many clients: the remaining connections are kept for players (the control role)"
        case .tooManyFromUID(let limit): why = "too many connections from uid \(peer.map { String($0.uid) } ?? "?") (at most \(limit) per user)"
        case .tooManyObservers(let limit): why = "too many observer connections (at most \(limit) from users outside the control role)"
        }
        log.warning("Refused a local client: \(why)",
                    ["INTERACTIVE_CLIENT_PID": peer.map { String($0.pid) } ?? "unknown",
                     "INTERACTIVE_CLIENT_UID": peer.map { String($0.uid) } ?? "unknown"], id: .clientRejected)
        let line = RPCResponse(id: .null, outcome: .failure(.daemon(.tooManyClients, why))).line()
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        close(fd)
    }
}

/// The server's admission state, shared by the accept loop and the connection tasks.
@LoopActor
final class AdmissionBox {
    private var admission: ConnectionAdmission

    init(_ admission: ConnectionAdmission) { self.admission = admission }

    func admit(role: ClientRole, uid: UInt32?) -> ConnectionAdmission.Refusal? { admission.admit(role: role, uid: uid) }

    func leave(uid: UInt32?, role: ClientRole) { admission.leave(uid: uid, role: role) }
}
