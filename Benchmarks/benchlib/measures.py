"""Measurements that more than one benchmark reports (runtime/compare.py, overlay_cost.py)."""
import os
import re
import subprocess
import tempfile
import threading
import time

from . import callgrind, procfs
from .children import CommandChild, http_json, start_until_line, stop
from .daemon import Daemon, LocalAPI, login_and_join

BENCHMARKS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCHMARKS)


def rss_joined_with_viewer(binary, python, work, idle_seconds=3):
    """The daemon pointed at the reference backend (tools.backend), a viewer logged in and the
    live room m1 joined, subscribed to every event as a player is; the backend's REST log must
    show the daemon's request. After `idle_seconds`: {"status": /proc/PID/status fields,
    "threads": names, "rest": the REST requests seen}."""
    backend, line = start_until_line([python, "-m", "tools.backend", "--port", "0", "--log-level", "warning"],
                                     "backend listening on", 60, cwd=ROOT)
    daemon = None
    try:
        base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
        daemon = Daemon(binary, tempfile.mkdtemp(prefix="rss-", dir=work), base, tenant="onlivev2")
        player = daemon.connect()
        login_and_join(player, "m1", mode="live")
        player.call("events.subscribe", {})
        deadline = time.monotonic() + 10
        rest = []
        while time.monotonic() < deadline:
            rest = http_json(base + "/_admin/rest-log")["items"]
            if rest:
                break
            time.sleep(0.1)
        if not rest:
            raise RuntimeError("the daemon made no REST call within 10 s of the login and the join")
        time.sleep(idle_seconds)
        result = {"status": procfs.status(daemon.pid), "threads": procfs.thread_names(daemon.pid),
                  "rest": sorted({f"{item['method']} {item['path']}" for item in rest})}
        player.close()
        return result
    finally:
        if daemon is not None:
            daemon.stop()
        stop(backend)


def e2e_latency(binary, ipc_bench, python, rate=500, seconds=5, rounds=3):
    """Benchmarks/e2e.py with tracked overlays at `rate`/s, `rounds` rounds of `seconds`, no ramp:
    {"daemon_p99_ms", "python_p99_ms", "daemon_p50_ms", "python_p50_ms", "lines": its round
    lines}. The daemon's p99 is to an `ipc-bench subscribe` player, python-socketio's
    AsyncClient's beside it from the same sender."""
    out = subprocess.run(
        [python, os.path.join(BENCHMARKS, "e2e.py"), "--daemon", binary, "--ipc-bench", ipc_bench, "--python", python,
         "--tracked", "1", "--latency-rate", str(rate), "--latency-seconds", str(seconds),
         "--latency-rounds", str(rounds), "--rates", ""],
        capture_output=True, text=True, timeout=900)
    figures = dict(re.findall(r"^figure (\S+) ([0-9.]+)", out.stdout, re.M))
    name = f"e2e.r{int(rate)}"
    wanted = {key: f"{name}.{key}" for key in ("daemon_p50_ms", "daemon_p99_ms", "python_p50_ms", "python_p99_ms")}
    if out.returncode != 0 or any(figure not in figures for figure in wanted.values()):
        raise RuntimeError(f"e2e.py failed:\n{out.stdout}\n{out.stderr}")
    result = {key: float(figures[figure]) for key, figure in wanted.items()}
    result["lines"] = [line.strip() for line in out.stdout.splitlines() if line.startswith(("  round", "  median"))]
    return result


class ShowCounter(threading.Thread):
    """Reads every event of one events.subscribe connection and counts overlay.show."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api = api
        api.call("events.subscribe", {})
        api.sock.settimeout(None)
        self.shows = 0
        self.lock = threading.Lock()

    def run(self):
        for line in self.api.file:
            if '"overlay.show"' in line:
                with self.lock:
                    self.shows += 1

    def count(self):
        with self.lock:
            return self.shows


def _settle(base, counter, expected_shows, timeout=300):
    """Waits until the subscriber read `expected_shows` overlay.show and the sender's emit-ack
    count stayed the same for two seconds (bounded)."""
    deadline = time.monotonic() + timeout
    last, stable_since = None, time.monotonic()
    while time.monotonic() < deadline:
        acks = http_json(base + "/bench/state")["acks"]
        if acks != last:
            last, stable_since = acks, time.monotonic()
        if counter.count() >= expected_shows and time.monotonic() - stable_since >= 2:
            return
        time.sleep(0.25)
    raise RuntimeError(f"not settled within {timeout} s: {counter.count()} of {expected_shows} overlay.show read")


def instructions_per_overlay(binary, python, work, overlays=200, rate=20, with_python_client=False):
    """The daemon under callgrind, joined to e2e_sender.py's room `bench` with one subscriber
    reading every event; after a warm-up the counters are zeroed, `overlays` tracked overlays
    are sent at `rate`/s, every overlay.show is read and the emit-acks settle, then the counters
    are dumped: instructions of every thread (user space, libraries included) / overlays. Also
    the instructions from exec to READY=1 of the same process.

    With `with_python_client`, python-socketio's AsyncClient (e2e_pyclient.py) runs under
    callgrind in the same room, receiving the same emits, counted over the same window.
    Returns {"sent", "daemon_to_ready", "daemon_total", "daemon_per_overlay"[, "python_total",
    "python_per_overlay"]}."""
    run_dir = tempfile.mkdtemp(prefix="cg-", dir=work)
    stripped = callgrind.strip_debug(binary, os.path.join(run_dir, "interactived"))
    sender, line = start_until_line([python, os.path.join(BENCHMARKS, "e2e_sender.py"), "--port", "0"], "READY", 60)
    daemon = client = None
    try:
        base = f"http://127.0.0.1:{int(line.split()[1])}"
        daemon_out = os.path.join(run_dir, "daemon.callgrind")
        daemon = Daemon(stripped, os.path.join(run_dir, "daemon"), base, prefix=callgrind.prefix(daemon_out),
                        ready_timeout=300)
        result = {"daemon_to_ready": callgrind.dump(daemon.pid, daemon_out, "ready")}
        counter = ShowCounter(daemon.connect())
        counter.start()
        control = daemon.connect()
        if control.call("room.join", {"mediaId": "bench"}).get("state") != "joined":
            raise RuntimeError("room.join did not join")
        python_out = os.path.join(run_dir, "python.callgrind")
        if with_python_client:
            with open(os.path.join(run_dir, "python.stderr"), "w") as stderr:
                client = CommandChild("python client under callgrind",
                                      callgrind.prefix(python_out) + [callgrind.interpreter(python),
                                                                      os.path.join(BENCHMARKS, "e2e_pyclient.py"),
                                                                      "--url", base],
                                      stderr=stderr)
            client.expect("READY", 600)
        http_json(base + "/bench/run", {"room": "bench", "rate": 5, "seconds": 1, "tag": "warm", "tracked": True},
                  timeout=120)
        _settle(base, counter, 5)
        callgrind.zero(daemon.pid)
        if client:
            client.ask("expect cg %d" % (overlays,))
            callgrind.zero(client.pid)
        seconds = overlays / rate
        sent = http_json(base + "/bench/run", {"room": "bench", "rate": rate, "seconds": seconds, "tag": "cg",
                                               "tracked": True}, timeout=seconds * 10 + 120)["sent"]
        _settle(base, counter, 5 + sent)
        result["daemon_total"] = callgrind.dump(daemon.pid, daemon_out, "overlays")
        if client:
            reached = client.read_json(120)
            if reached.get("received") != sent:
                raise RuntimeError(f"the python client received {reached} of {sent}")
            result["python_total"] = callgrind.dump(client.pid, python_out, "overlays")
            result["python_per_overlay"] = result["python_total"] / sent
        result["sent"] = sent
        result["daemon_per_overlay"] = result["daemon_total"] / sent if sent else float("nan")
        control.close()
        return result
    finally:
        if client is not None:
            client.stop()
        if daemon is not None:
            daemon.stop(timeout=120)
        stop(sender)
