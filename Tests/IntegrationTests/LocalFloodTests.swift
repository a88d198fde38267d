import Foundation
import IPCProtocol
import JSONValue
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// No local user can kill the daemon (issue 20, item 3): one observer uid with 64 connections
/// that never read and reconnect when dropped took it to 130 MiB (246 with two uids). Each
/// observer now holds at most 128 KiB of replies, and all clients together 8 MiB.
@Suite struct LocalFloodTests {
    /// Runs, as root, one child per uid that drops to that uid and floods the socket from
    /// `connections` connections for `seconds`: each sends a replay request and status requests
    /// and never reads; a connection the daemon drops is made again. Prints, per uid, how many
    /// were dropped.
    private func flood(_ daemon: DaemonProcess, uids: [Int], connections: Int, seconds: Double) async throws -> CommandResult {
        let script = """
            import os, socket, sys, time
            path, connections, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
            requests = (b'{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"since":0}}\\n'
                        + b'{"jsonrpc":"2.0","id":2,"method":"daemon.status"}\\n' * 8)
            def attack(uid):
                os.setgid(uid); os.setuid(uid)
                held, dropped, deadline = {}, 0, time.monotonic() + seconds
                while time.monotonic() < deadline:
                    for slot in range(connections):
                        sock = held.get(slot)
                        if sock is None:
                            sock = socket.socket(socket.AF_UNIX)
                            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                            sock.setblocking(False)
                            try:
                                sock.connect(path)
                            except OSError:
                                sock.close(); continue
                            held[slot] = sock
                        try:
                            sock.send(requests)
                        except BlockingIOError:
                            pass
                        except OSError:
                            dropped += 1; sock.close(); held.pop(slot)
                    time.sleep(0.01)
                # One write, so that the children's lines never interleave (under
                # PYTHONUNBUFFERED, print wrote each item apart: "uiduid 65534 …").
                os.write(1, f'uid {uid} dropped {dropped}\\n'.encode())
                os._exit(0)
            children = []
            for uid in map(int, sys.argv[4:]):
                child = os.fork()
                if child == 0:
                    attack(uid)
                children.append(child)
            for child in children:
                os.waitpid(child, 0)
            """
        return try await runCommand(["/usr/bin/python3", "-c", script, daemon.socketPath, String(connections), String(seconds)]
                                    + uids.map(String.init), timeoutMs: Int(seconds * 1000) + 30_000)
    }

    /// Events for the replays and the snapshots: overlays of 2 KB each in a live room.
    private func liveRoomWithEvents(_ launcher: [String] = []) async throws -> (ReferenceBackend, DaemonProcess, DaemonConnection) {
        let backend = try await ReferenceBackend()
        let daemon = try await DaemonProcess(arguments: backend.daemonFlags(), launcher: launcher)
        let player = try await daemon.client()
        #expect(try await player.call("room.join", ["mediaId": "m1", "mode": "live"])["state"] == "joined")
        for number in 0..<300 {
            try await backend.emitOverlay(room: "m1", backend.quiz("tl-\(number)", extra: ["pad": .string(String(repeating: "x", count: 2000))]))
        }
        return (backend, daemon, player)
    }

    /// An observer that leaves its replies unread is cut off at 128 KiB (it was 1 MiB, as for a
    /// player), and the player is served all along.
    @Test func anObserverLeavingRepliesUnreadIsCutOffEarly() async throws {
        let (backend, daemon, player) = try await liveRoomWithEvents()
        let result = try await flood(daemon, uids: [65534], connections: 4, seconds: 2)
        #expect(result.stdout.contains("uid 65534 dropped"), "\(result.stdout) \(result.stderr)")
        #expect(try await daemon.waitForLog("leaves its replies unread (over 128 KiB)"))
        #expect(try await player.call("daemon.hello")["daemon"] == "interactived")
        withExtendedLifetime(backend) {}
    }

    /// Two observer uids of 64 connections each, never reading, reconnecting when dropped: the
    /// daemon in a 64 MiB memory cgroup (the unit's MemoryMax) was killed; now it holds 8 MiB
    /// for them at most, stops those holding most, and keeps serving the player.
    @Test(.enabled(if: MemoryCgroup.isAvailable, "needs root and a writable memory cgroup hierarchy"))
    func twoObserverUIDsCannotKillADaemonLimitedTo64MiB() async throws {
        let cgroup = try MemoryCgroup(limitBytes: 64 << 20)
        defer { cgroup.remove() }
        let (backend, daemon, player) = try await liveRoomWithEvents(cgroup.launcher)
        let result = try await flood(daemon, uids: [65534, 65533], connections: 64, seconds: 10)
        #expect(result.stdout.contains("uid 65534 dropped") && result.stdout.contains("uid 65533 dropped"), "\(result.stdout) \(result.stderr)")
        #expect(daemon.process.isRunning, "OOM kills: \(cgroup.oomKills ?? -1)")
        #expect(cgroup.oomKills == 0)
        #expect(try await player.call("daemon.hello", timeoutMs: 30_000)["daemon"] == "interactived")
        print("LocalFloodTests: the daemon's cgroup peaked at \((cgroup.peakBytes ?? 0) >> 10) KiB of its 65536 KiB")
        let status = try await daemon.stop()
        #expect(status == 0, "\(daemon.stderr.suffix(3000))")
        withExtendedLifetime(backend) {}
    }
}
