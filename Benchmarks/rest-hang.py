"""REST never blocks anything (issue 11, item 4): the benchmark driver of Benchmarks/rest-hang.sh.

For each daemon binary given, in the same run, against the reference backend on 127.0.0.1:

1. **RSS joined with a viewer logged in**: login, `room.join` of a live room (the join makes a
   REST call: the interactive status), then idle for `--idle-seconds`; VmRSS (and RssAnon,
   RssFile) from /proc/PID/status.
2. **Local API under hanging REST calls**: `httpTimeoutMs` 600000 and the backend's
   `restDelayMs` 600000, then `--calls` local connections each send `interactive.status` (one
   REST call each, which hangs); once the backend holds them (`restInFlight`, bounded wait), one
   more connection sends `--probes` `daemon.hello` calls one after the other, each waited for
   2 s at most (a probe without an answer counts as 2000 ms; after 5 of them the rest are
   skipped). Prints p50, p99, max and the unanswered probes.
3. **SIGTERM → exit**, with the hanging calls still open (bounded: SIGKILL after 10 s).

Usage: python3 Benchmarks/rest-hang.py NAME=BINARY [NAME=BINARY ...] [--calls 100] [--probes 300]
"""
import argparse
import json
import os
import signal
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tools.backend.tests.support import BackendProcess  # noqa: E402
from tools.testsupport.daemon import DaemonProcess  # noqa: E402

from benchlib import procfs  # noqa: E402
from benchlib.stats import percentile  # noqa: E402

PROBE_TIMEOUT = 2.0


def log(text):
    print(text, flush=True)


class Connection:
    """One JSON-lines connection to the daemon's local socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1

    def send(self, method, params=None):
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        return message["id"]

    def reply(self, request_id, timeout):
        """The reply to `request_id`, or None when none came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == request_id:
                    return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None
            if not data:
                return None
            self.buffer += data

    def call(self, method, params=None, timeout=10.0):
        reply = self.reply(self.send(method, params), timeout)
        if reply is None or "error" in reply:
            raise RuntimeError(f"{method}: {reply}")
        return reply["result"]

    def close(self):
        self.sock.close()


def admin(backend, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(backend.base_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


def memory(pid):
    """VmRSS, RssAnon and RssFile in MiB."""
    fields = procfs.status(pid)
    return {key: fields.get(key, 0) / 1024 for key in ("VmRSS", "RssAnon", "RssFile")}


def measure(name, binary, args, work):
    log(f"\n== {name}: {binary}")
    backend = BackendProcess(work)
    daemon = DaemonProcess(["--socket-url", backend.base_url, "--api-url", backend.base_url,
                            "--tenant", "onlivev2", "--os", "linuxstb"], binary=Path(binary))
    hanging = []
    try:
        player = Connection(daemon.socket_path)
        player.call("session.login", {"token": "token-alice", "userId": "alice", "displayName": "Alice"})
        joined = player.call("room.join", {"mediaId": "m1", "mode": "live"})
        if joined.get("state") != "joined":
            raise RuntimeError(f"room.join: {joined}")
        deadline = time.monotonic() + 10
        while not admin(backend, "GET", "/_admin/rest-log")["items"] and time.monotonic() < deadline:
            time.sleep(0.05)
        rest_calls = len(admin(backend, "GET", "/_admin/rest-log")["items"])
        time.sleep(args.idle_seconds)
        rss = memory(daemon.process.pid)
        log(f"RSS joined, viewer logged in ({rest_calls} REST call(s) done), idle {args.idle_seconds} s: "
            f"VmRSS {rss['VmRSS']:.1f} MiB (RssAnon {rss['RssAnon']:.1f}, RssFile {rss['RssFile']:.1f})")

        player.call("config.set", {"httpTimeoutMs": 600000})
        admin(backend, "POST", "/_admin/fault", {"restDelayMs": 600000})
        for _ in range(args.calls):
            connection = Connection(daemon.socket_path)
            connection.send("interactive.status", {"mediaId": "m1"})
            hanging.append(connection)
        deadline = time.monotonic() + 20
        held = 0
        while time.monotonic() < deadline:
            held = admin(backend, "GET", "/_admin/state")["restInFlight"]
            if held >= args.calls:
                break
            time.sleep(0.1)
        log(f"REST calls hanging at the backend: {held} of {args.calls} asked "
            f"(VmRSS {memory(daemon.process.pid)['VmRSS']:.1f} MiB)")

        probe = Connection(daemon.socket_path)
        latencies = []
        unanswered = 0
        for _ in range(args.probes):
            started = time.monotonic()
            reply = probe.reply(probe.send("daemon.hello"), PROBE_TIMEOUT)
            latencies.append((time.monotonic() - started) * 1000)
            if reply is None:
                unanswered += 1
                if unanswered == 5:
                    break
        log(f"daemon.hello under {held} hanging REST calls: {len(latencies)} probes, "
            f"p50 {percentile(latencies, 50):.2f} ms, p99 {percentile(latencies, 99):.2f} ms, "
            f"max {max(latencies):.2f} ms, unanswered in {PROBE_TIMEOUT:.0f} s: {unanswered}"
            + (" (probing stopped after 5)" if unanswered == 5 else ""))

        started = time.monotonic()
        daemon.process.send_signal(signal.SIGTERM)
        try:
            status = daemon.process.wait(10)
            log(f"SIGTERM → exit: {(time.monotonic() - started) * 1000:.0f} ms (status {status})")
        except Exception:
            log("SIGTERM → exit: none within 10 s (killed)")
    finally:
        for connection in hanging:
            connection.close()
        daemon.stop()
        backend.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="NAME=PATH of an interactived binary")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--probes", type=int, default=300)
    parser.add_argument("--idle-seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rest-hang-") as work:
        for entry in args.binaries:
            name, _, binary = entry.partition("=")
            measure(name, binary, args, Path(work))


if __name__ == "__main__":
    main()
