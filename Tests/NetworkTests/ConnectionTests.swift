import Network
import Runtime
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 whose accepted connections run `serve` on a plain thread.
private final class LocalServer: Sendable {
    let port: Int
    private let fd: Int32

    init(serve: @escaping @Sendable (Int32) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw NetworkError.connectFailed("cannot listen: \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd
        // The accept thread owns the listener and closes it when accept fails after `stop`.
        // Closed by `stop` instead, its number could be reused by another test's listener
        // (tests run in parallel) before this thread's next accept, which would then take that
        // test's connection and serve it with this test's peer.
        PeerThread.detach {
            while true {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    PeerThread.detach { serve(client) }
                } else if errno != EINTR && errno != ECONNABORTED {
                    close(listener)
                    return
                }
            }
        }
    }

    /// Stops accepting (a pending `accept` fails at once); the accept thread closes the listener.
    func stop() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// Just enough of a thread for the test peers (FoundationEssentials has none).
private enum PeerThread {
    private final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
    static func detach(_ body: @escaping @Sendable () -> Void) {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        _ = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, box)
        pthread_detach(thread)
    }
}

/// Echoes every byte until the peer closes.
private func echo(_ fd: Int32) {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { break }
        _ = write(fd, buffer, count)
    }
    close(fd)
}

/// Events of one connection, collected on the loop.
private final class Recorder: Sendable {
    private let state = Mutex<(bytes: [UInt8], closed: NetworkError??, drained: Int)>(([], nil, 0))
    var bytes: [UInt8] { state.withLock { $0.bytes } }
    var closed: NetworkError?? { state.withLock { $0.closed } }
    var drained: Int { state.withLock { $0.drained } }

    func record(_ event: Connection.Event) {
        state.withLock { state in
            switch event {
            case .received(let bytes): state.bytes += bytes
            case .drained: state.drained += 1
            case .closed(let error): state.closed = .some(error)
            }
        }
    }

    /// Polls the loop until `condition` holds (bounded: 10 s).
    func wait(until condition: @Sendable (Recorder) -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !condition(self) {
            guard ContinuousClock.now < deadline else { throw NetworkError.timeout("test condition") }
            try await EventLoop.shared.sleep(for: .milliseconds(2))
        }
    }
}

/// The tests' owner of a connection, on the loop actor as the daemon's are.
@LoopActor
private final class Owner {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
    func start(_ recorder: Recorder) { connection.start { recorder.record($0) } }
    func write(_ bytes: [UInt8]) { connection.write(bytes) }
    func setReading(_ on: Bool) { connection.setReading(on) }
    func close(linger: Duration = .seconds(2)) { connection.close(linger: linger) }
    func drain() { connection.notifyWhenDrained() }
}

@Suite @LoopActor struct ConnectionTests {
    @Test func echoesBytesAndClosesInOrder() async throws {
        let server = try LocalServer(serve: echo)
        defer { server.stop() }
        let owner = Owner(try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, timeout: .seconds(5)))
        let recorder = Recorder()
        owner.start(recorder)
        let message = Array("hello, loop".utf8)
        owner.write(message)
        owner.drain()
        try await recorder.wait { $0.bytes.count >= message.count }
        #expect(recorder.bytes == message)
        #expect(recorder.drained == 1)
        // The echo peer never closes first: the connection ends when the linger does, cleanly.
        owner.close(linger: .milliseconds(50))
        try await recorder.wait { $0.closed != nil }
        #expect(recorder.closed == .some(nil), "an orderly close reports no error")
    }

    @Test func reportsThePeersEndOfStream() async throws {
        let server = try LocalServer { fd in
            let bytes: [UInt8] = [1, 2, 3]
            _ = write(fd, bytes, bytes.count)
            close(fd)
        }
        defer { server.stop() }
        let owner = Owner(try await Connection.connect(host: "localhost", port: server.port, tls: nil, timeout: .seconds(5)))
        let recorder = Recorder()
        owner.start(recorder)
        try await recorder.wait { $0.closed != nil }
        #expect(recorder.bytes == [1, 2, 3])
        #expect(recorder.closed == .some(nil))
    }

    /// What one turn of the loop writes goes out together at the end of the turn (the acks of
    /// the overlays one read brought take one `send`): nothing has reached the peer while the
    /// turn still runs, all of it has after.
    @Test func writesOfOneTurnAreSentTogetherWhenTheTurnEnds() async throws {
        let accepted = Mutex<Int32?>(nil)
        let server = try LocalServer { fd in accepted.withLock { $0 = fd } }
        defer { server.stop() }
        let owner = Owner(try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, timeout: .seconds(5)))
        let recorder = Recorder()
        owner.start(recorder)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while accepted.withLock({ $0 }) == nil {
            guard ContinuousClock.now < deadline else { throw NetworkError.timeout("accept") }
            try await EventLoop.shared.sleep(for: .milliseconds(2))
        }
        let peer = try #require(accepted.withLock { $0 })
        defer { close(peer) }
        var buffer = [UInt8](repeating: 0, count: 16)
        owner.write([1])
        owner.write([2, 3])
        let early = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT | MSG_PEEK))
        #expect(early < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "nothing is sent before the turn ends")
        var received: [UInt8] = []
        while received.count < 3 {
            guard ContinuousClock.now < deadline else { throw NetworkError.timeout("the peer's read") }
            try await EventLoop.shared.sleep(for: .milliseconds(2))
            let count = recv(peer, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count > 0 { received += buffer[..<count] }
        }
        #expect(received == [1, 2, 3])
        owner.close(linger: .milliseconds(50))
    }

    @Test func readsNothingWhileReadingIsOff() async throws {
        let server = try LocalServer(serve: echo)
        defer { server.stop() }
        let owner = Owner(try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, timeout: .seconds(5)))
        let recorder = Recorder()
        owner.setReading(false)
        owner.start(recorder)
        owner.write([42])
        try await EventLoop.shared.sleep(for: .milliseconds(100))
        #expect(recorder.bytes.isEmpty)
        owner.setReading(true)
        try await recorder.wait { !$0.bytes.isEmpty }
        #expect(recorder.bytes == [42])
        owner.close()
    }

    @Test func aRefusedPortFailsWithConnectFailed() async throws {
        let server = try LocalServer(serve: echo)
        let port = server.port
        server.stop()
        await #expect(throws: NetworkError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: port, tls: nil, timeout: .seconds(5))
        }
    }

    @Test func aCancelledConnectEndsAtOnce() async throws {
        // A TLS handshake with a peer that never answers: only cancellation ends it early.
        let server = try LocalServer { fd in
            var byte: UInt8 = 0
            _ = read(fd, &byte, 1)
            sleep(30)
            close(fd)
        }
        defer { server.stop() }
        let attempt = Task {
            try await Connection.connect(host: "127.0.0.1", port: server.port, tls: TLSOptions(), timeout: .seconds(60))
        }
        try await EventLoop.shared.sleep(for: .milliseconds(50))
        attempt.cancel()
        // Uncancelled, the attempt would time out only after 60 s, with `timeout`.
        await #expect(throws: NetworkError.cancelled) { _ = try await attempt.value }
    }

    @Test func aStalledHandshakeTimesOut() async throws {
        let server = try LocalServer { fd in
            sleep(5)
            close(fd)
        }
        defer { server.stop() }
        let error = await #expect(throws: NetworkError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: TLSOptions(), timeout: .milliseconds(500))
        }
        guard case .timeout? = error else {
            Issue.record("expected a timeout, got \(String(describing: error))")
            return
        }
    }
}
