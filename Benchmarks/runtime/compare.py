"""Measures several builds of interactived side by side, in one run, for issue 11's "Must hold"
figures. Each daemon is given as NAME=PATH (only the built binary is needed, so any revision and
any build layout serve); the measuring tools come from the current tree.

  (a) RSS joined and idle: the reference backend (tools/backend), the daemon pointed at it, a
      viewer logged in (session.login) and a live room joined; the backend's REST log must show a
      request from the daemon; VmRSS (RssAnon, RssFile) after --idle-seconds. Median of --runs
      daemons, the builds taken in turn.
  (b) exec → READY=1 in ms: `ipc-bench ready` (posix_spawn, our own NOTIFY_SOCKET, state in
      /dev/shm), --ready-rounds rounds of --ready-runs starts per build, taken in turn; the
      figure is the median of the rounds' medians. Also the RSS 1 s after READY=1 (no room).
  (c) end-to-end p99 at 500 tracked overlays/s: Benchmarks/e2e.py (e2e_sender.py, the daemon and
      its subscriber, python-socketio's AsyncClient beside it), 3 rounds of 5 s, no ramp; the
      daemon's p99 and the python client's of the same run, and their ratio.
  (d) CPU per tracked overlay: the daemon under `valgrind --tool=callgrind`, joined to
      e2e_sender.py's room with a subscriber reading every event; counters zeroed, --overlays
      tracked overlays sent at --callgrind-rate, every overlay.show read and the acks settled,
      then dumped: instructions (Ir, every thread, libraries included) / overlays. Also the
      instructions from exec to READY=1 of the same process.
  (e) threads when idle: the names in /proc/PID/task/*/comm of the daemon of (a).

Usage: python3 Benchmarks/runtime/compare.py --daemon base=PATH --daemon current=PATH --ipc-bench PATH
       [--runs 3] [--ready-runs 15] [--ready-rounds 3] [--overlays 200] [--skip e2e,callgrind,...]
Benchmarks/runtime/compare.sh builds the daemons and ipc-bench, then runs this.
"""
import argparse
import collections
import glob
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCHMARKS)
SECTIONS = ("rss", "ready", "e2e", "callgrind")


def log(text=""):
    print(text, flush=True)


def daemon_environment(notify_path, work):
    """The test environment minus anything systemd or the caller's session would hand the daemon."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "JOURNAL_STREAM", "WATCHDOG_USEC",
                          "WATCHDOG_PID", "INTERACTIVED_SOCKET", "NOTIFY_SOCKET")}
    env["NOTIFY_SOCKET"] = notify_path
    env["INTERACTIVED_CONFIG"] = os.path.join(work, "absent-config.json")
    return env


def notify_socket(path, timeout):
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(path)
    notify.settimeout(timeout)
    return notify


def wait_ready(notify, process):
    """Reads datagrams until READY=1 (bounded by the socket's timeout)."""
    while True:
        try:
            datagram = notify.recv(4096)
        except socket.timeout:
            raise RuntimeError(f"no READY=1 (daemon exit status {process.poll()})")
        if b"READY=1" in datagram:
            return


def stop(process, timeout=20):
    """SIGTERM, then SIGKILL after `timeout` seconds; always reaps."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


class Connection:
    """One JSON-lines connection to the daemon's local API."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(20)
        self.sock.connect(path)
        self.file = self.sock.makefile("rw")
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        request_id = self.next_id
        self.file.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n")
        self.file.flush()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.file.readline()
            if not line:
                raise RuntimeError(f"{method}: the daemon closed the connection")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
        raise RuntimeError(f"{method}: no reply within 20 s")

    def close(self):
        self.sock.close()


def connect_when_listening(path, process, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return Connection(path)
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def http_json(url, body=None, timeout=30):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
                fields[key] = int(value.split()[0])
    return fields


def thread_names(pid):
    """The names of the process's threads (at most 15 characters each: the kernel's limit); the
    main thread, named after the executable, as "main"."""
    names = []
    for comm in sorted(glob.glob(f"/proc/{pid}/task/*/comm")):
        try:
            with open(comm) as handle:
                name = handle.read().strip()
        except OSError:
            continue  # the thread ended between the listing and the read
        names.append("main" if comm.split("/")[-2] == str(pid) else name)
    return names


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def median(values):
    return statistics.median(values) if values else float("nan")


class Line:
    """A child process that prints one line when it is ready (e2e_sender.py, tools.backend)."""

    @staticmethod
    def start(argv, marker, timeout, cwd=None):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env)
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = process.stdout.readline()
            if not line:
                break
            seen.append(line)
            if marker in line:
                # Keep draining the pipe so the child never blocks on a full one.
                threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
                return process, line
        stop(process)
        raise RuntimeError(f"{argv[0]}…: no {marker!r} within {timeout} s: {''.join(seen)[-2000:]}")


# (a) and (e) ------------------------------------------------------------------------------------

def measure_joined(name, daemon_path, args, work):
    """Returns (status fields, thread names, REST requests seen) of one daemon joined with a viewer."""
    backend, line = Line.start([args.python, "-m", "tools.backend", "--port", "0", "--log-level", "warning"],
                               "backend listening on", 60, cwd=ROOT)
    daemon = None
    try:
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", line).group(1))
        base = f"http://127.0.0.1:{port}"
        run_dir = tempfile.mkdtemp(prefix=f"rss-{name}-", dir=work)
        notify = notify_socket(os.path.join(run_dir, "n.sock"), 30)
        socket_path = os.path.join(run_dir, "d.sock")
        daemon = subprocess.Popen(
            [daemon_path, "--socket-url", base, "--api-url", base, "--tenant", "onlivev2", "--os", "linuxstb",
             "--socket", socket_path, "--state-directory", os.path.join(run_dir, "state"), "--log-target", "stderr"],
            env=daemon_environment(notify.getsockname(), run_dir), stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(run_dir, "daemon.stderr"), "w"))
        wait_ready(notify, daemon)
        player = connect_when_listening(socket_path, daemon)
        player.call("session.login", {"token": "token-alice", "userId": "alice", "displayName": "Alice"})
        joined = player.call("room.join", {"mediaId": "m1", "mode": "live"})
        if joined.get("state") != "joined":
            raise RuntimeError(f"{name}: room.join replied {joined}")
        player.call("events.subscribe", {})
        deadline = time.monotonic() + 10
        rest = []
        while time.monotonic() < deadline:
            rest = http_json(base + "/_admin/rest-log")["items"]
            if rest:
                break
            time.sleep(0.1)
        if not rest:
            raise RuntimeError(f"{name}: the daemon made no REST call within 10 s of the login and the join")
        time.sleep(args.idle_seconds)
        status = proc_status(daemon.pid)
        threads = thread_names(daemon.pid)
        player.close()
        return status, threads, [f"{item['method']} {item['path']}" for item in rest]
    finally:
        stop(daemon)
        stop(backend)


def section_rss(daemons, args, work):
    log(f"== (a) RSS joined to a live room of the reference backend, viewer logged in, idle {args.idle_seconds:.0f} s; "
        f"(e) threads; {args.runs} daemons per build, taken in turn")
    samples = collections.defaultdict(list)
    threads = {}
    for number in range(args.runs):
        for name, path in daemons:
            status, names, rest = measure_joined(name, path, args, work)
            samples[name].append(status)
            threads[name] = names
            log(f"  run {number + 1} {name}: VmRSS {mib(status['VmRSS'])} (RssAnon {mib(status['RssAnon'])}, "
                f"RssFile {mib(status['RssFile'])}), {len(names)} threads; REST: {', '.join(sorted(set(rest)))}")
    results = {}
    for name, _ in daemons:
        rss = median([s["VmRSS"] for s in samples[name]])
        anon = median([s["RssAnon"] for s in samples[name]])
        file_backed = median([s["RssFile"] for s in samples[name]])
        counted = collections.Counter(threads[name])
        described = ", ".join(f"{thread} ×{count}" if count > 1 else thread for thread, count in sorted(counted.items()))
        log(f"  {name}: VmRSS median {mib(rss)} (RssAnon {mib(anon)}, RssFile {mib(file_backed)})")
        log(f"  {name}: threads idle ({len(threads[name])}): {described}")
        log(f"figure {name}.rss_joined_viewer_kib {rss:.0f}")
        log(f"figure {name}.threads {len(threads[name])}")
        results[name] = {"rss_kib": rss, "threads": described, "thread_count": len(threads[name])}
    return results


# (b) --------------------------------------------------------------------------------------------

def section_ready(daemons, args, work):
    log(f"== (b) exec → READY=1: ipc-bench ready, {args.ready_rounds} rounds of {args.ready_runs} starts per build, "
        "taken in turn; state directory in /dev/shm when there is one")
    state_root = tempfile.mkdtemp(prefix="ready-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else work)
    medians = collections.defaultdict(list)
    idle_rss = collections.defaultdict(list)
    try:
        for number in range(args.ready_rounds):
            for name, path in daemons:
                out = subprocess.run(
                    [args.ipc_bench, "ready", "--daemon", path, "--dir", os.path.join(state_root, name),
                     "--runs", str(args.ready_runs), "--idle-runs", "1", "--idle-seconds", "1"],
                    capture_output=True, text=True, timeout=600)
                match = re.search(r"^figure ready\.median_ms ([0-9.]+)", out.stdout, re.M)
                if out.returncode != 0 or not match:
                    raise RuntimeError(f"ipc-bench ready {name} failed:\n{out.stdout}\n{out.stderr}")
                medians[name].append(float(match.group(1)))
                rss = re.search(r"^figure rss\.idle_kib ([0-9.]+)", out.stdout, re.M)
                if rss:
                    idle_rss[name].append(float(rss.group(1)))
                log(f"  round {number + 1} {name}: median {float(match.group(1)):.2f} ms")
    finally:
        shutil.rmtree(state_root, ignore_errors=True)
    results = {}
    for name, _ in daemons:
        value = median(medians[name])
        log(f"  {name}: exec → READY=1 {value:.2f} ms (median of the rounds' medians; rounds "
            f"{', '.join(f'{m:.2f}' for m in medians[name])})")
        log(f"figure {name}.ready_ms {value:.2f}")
        results[name] = {"ready_ms": value}
        if idle_rss[name]:
            rss = median(idle_rss[name])
            log(f"  {name}: RSS idle 1 s after READY=1, no room: {mib(rss)}")
            log(f"figure {name}.rss_idle_kib {rss:.0f}")
            results[name]["rss_idle_kib"] = rss
    return results


# (c) --------------------------------------------------------------------------------------------

def section_e2e(daemons, args, work):
    log(f"== (c) end to end at {args.e2e_rate:.0f} tracked overlays/s (Benchmarks/e2e.py: {args.e2e_rounds} rounds of "
        f"{args.e2e_seconds:.0f} s, no ramp), beside python-socketio's AsyncClient in the same run")
    results = {}
    for name, path in daemons:
        out = subprocess.run(
            [args.python, os.path.join(BENCHMARKS, "e2e.py"), "--daemon", path, "--ipc-bench", args.ipc_bench,
             "--python", args.python, "--tracked", "1", "--latency-rate", str(args.e2e_rate),
             "--latency-seconds", str(args.e2e_seconds), "--latency-rounds", str(args.e2e_rounds), "--rates", ""],
            capture_output=True, text=True, timeout=900)
        figures = dict(re.findall(r"^figure (\S+) ([0-9.]+)", out.stdout, re.M))
        rate = int(args.e2e_rate)
        daemon_p99 = figures.get(f"e2e.r{rate}.daemon_p99_ms")
        python_p99 = figures.get(f"e2e.r{rate}.python_p99_ms")
        if out.returncode != 0 or daemon_p99 is None or python_p99 is None:
            raise RuntimeError(f"e2e.py {name} failed:\n{out.stdout}\n{out.stderr}")
        for line in out.stdout.splitlines():
            if line.startswith("  round") or line.startswith("  median"):
                log(f"  {name}: {line.strip()}")
        daemon_p99, python_p99 = float(daemon_p99), float(python_p99)
        ratio = daemon_p99 / python_p99 if python_p99 else float("nan")
        log(f"  {name}: daemon p99 {daemon_p99:.2f} ms, python-socketio p99 {python_p99:.2f} ms (ratio {ratio:.2f})")
        log(f"figure {name}.e2e_p99_ms {daemon_p99:.2f}")
        log(f"figure {name}.e2e_python_p99_ms {python_p99:.2f}")
        results[name] = {"e2e_p99_ms": daemon_p99, "e2e_python_p99_ms": python_p99, "e2e_ratio": ratio}
    return results


# (d) --------------------------------------------------------------------------------------------

def callgrind_total(path):
    """The Ir total of a callgrind dump (its `totals:` or `summary:` line)."""
    with open(path, errors="replace") as dump:
        for line in dump:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError(f"{path}: no totals line")


def callgrind_dump(pid, work_dir, label):
    """Asks the running callgrind to dump; returns the new file's total."""
    before = set(glob.glob(os.path.join(work_dir, "callgrind.out*")))
    subprocess.run(["callgrind_control", "--dump=" + label, str(pid)], check=True, capture_output=True, timeout=120)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        fresh = set(glob.glob(os.path.join(work_dir, "callgrind.out*"))) - before
        for path in fresh:
            try:
                return callgrind_total(path)
            except RuntimeError:
                pass  # still being written
        time.sleep(0.2)
    raise RuntimeError("callgrind wrote no dump")


class Subscriber(threading.Thread):
    """Reads every event of one events.subscribe connection and counts overlay.show."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.connection = Connection(path)
        self.connection.call("events.subscribe", {})
        self.connection.sock.settimeout(None)
        self.shows = 0
        self.lock = threading.Lock()

    def run(self):
        for line in self.connection.file:
            if '"overlay.show"' in line:
                with self.lock:
                    self.shows += 1

    def count(self):
        with self.lock:
            return self.shows


def measure_callgrind(name, daemon_path, args, work):
    run_dir = tempfile.mkdtemp(prefix=f"cg-{name}-", dir=work)
    # valgrind cannot read the DWARF of the toolchain's clang; the symbol table is enough.
    binary = os.path.join(run_dir, "interactived")
    subprocess.run(["strip", "--strip-debug", "-o", binary, daemon_path], check=True)
    sender, line = Line.start([args.python, os.path.join(BENCHMARKS, "e2e_sender.py"), "--port", "0"], "READY", 60)
    daemon = None
    try:
        base = f"http://127.0.0.1:{int(line.split()[1])}"
        notify = notify_socket(os.path.join(run_dir, "n.sock"), 300)
        socket_path = os.path.join(run_dir, "d.sock")
        daemon = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={run_dir}/callgrind.out", binary,
             "--socket-url", base, "--api-url", base, "--tenant", "bench", "--os", "linuxstb", "--socket", socket_path,
             "--state-directory", os.path.join(run_dir, "state"), "--log-target", "stderr"],
            env=daemon_environment(notify.getsockname(), run_dir), stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(run_dir, "valgrind.stderr"), "w"))
        wait_ready(notify, daemon)
        to_ready = callgrind_dump(daemon.pid, run_dir, "ready")
        subscriber = Subscriber(socket_path)
        subscriber.start()
        control = Connection(socket_path)
        if control.call("room.join", {"mediaId": "bench"}).get("state") != "joined":
            raise RuntimeError(f"{name}: room.join did not join")
        http_json(base + "/bench/run", {"room": "bench", "rate": 5, "seconds": 1, "tag": "warm", "tracked": True},
                  timeout=120)
        settle(base, subscriber, 5)
        subprocess.run(["callgrind_control", "--zero", str(daemon.pid)], check=True, capture_output=True, timeout=120)
        seconds = args.overlays / args.callgrind_rate
        sent = http_json(base + "/bench/run", {"room": "bench", "rate": args.callgrind_rate, "seconds": seconds,
                                               "tag": "cg", "tracked": True}, timeout=seconds * 10 + 120)["sent"]
        settle(base, subscriber, 5 + sent)
        total = callgrind_dump(daemon.pid, run_dir, "overlays")
        control.close()
        return to_ready, total, sent
    finally:
        stop(daemon, timeout=120)
        stop(sender)


def settle(base, subscriber, expected_shows, timeout=300):
    """Waits until the subscriber read `expected_shows` overlay.show and the sender's ack count
    stayed the same for two seconds (bounded)."""
    deadline = time.monotonic() + timeout
    last, stable_since = None, time.monotonic()
    while time.monotonic() < deadline:
        acks = http_json(base + "/bench/state")["acks"]
        if acks != last:
            last, stable_since = acks, time.monotonic()
        if subscriber.count() >= expected_shows and time.monotonic() - stable_since >= 2:
            return
        time.sleep(0.25)
    raise RuntimeError(f"not settled within {timeout} s: {subscriber.count()} of {expected_shows} overlay.show read")


def section_callgrind(daemons, args, work):
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        log("== (d) skipped: valgrind is not installed (apt-get install valgrind)")
        return {}
    log(f"== (d) CPU per tracked overlay: valgrind --tool=callgrind, {args.overlays} tracked overlays at "
        f"{args.callgrind_rate:.0f}/s to a joined daemon with one subscriber; instructions (Ir) of every thread")
    results = {}
    for name, path in daemons:
        to_ready, total, sent = measure_callgrind(name, path, args, work)
        per_overlay = total / sent if sent else float("nan")
        log(f"  {name}: exec → READY=1 {to_ready:,} instructions; {sent} overlays {total:,} instructions: "
            f"{per_overlay:,.0f} per overlay")
        log(f"figure {name}.instructions_to_ready {to_ready}")
        log(f"figure {name}.instructions_per_overlay {per_overlay:.0f}")
        results[name] = {"instructions_to_ready": to_ready, "instructions_per_overlay": per_overlay}
    return results


# ------------------------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--daemon", action="append", required=True, help="NAME=PATH of a built interactived")
    parser.add_argument("--ipc-bench", required=True, help="ipc-bench of the Benchmarks package (release)")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=3, help="(a) daemons per build")
    parser.add_argument("--idle-seconds", type=float, default=3)
    parser.add_argument("--ready-runs", type=int, default=15)
    parser.add_argument("--ready-rounds", type=int, default=3)
    parser.add_argument("--e2e-rate", type=float, default=500)
    parser.add_argument("--e2e-seconds", type=float, default=5)
    parser.add_argument("--e2e-rounds", type=int, default=3)
    parser.add_argument("--overlays", type=int, default=200, help="(d) tracked overlays under callgrind")
    parser.add_argument("--callgrind-rate", type=float, default=20)
    parser.add_argument("--skip", default="", help=f"comma-separated sections to leave out: {','.join(SECTIONS)}")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work folder (its callgrind dumps, for callgrind_annotate) and print its path")
    args = parser.parse_args()
    daemons = []
    for spec in args.daemon:
        name, _, path = spec.partition("=")
        if not name or not os.access(path, os.X_OK):
            sys.exit(f"compare: --daemon {spec}: not NAME=PATH of an executable")
        daemons.append((name, os.path.abspath(path)))
    skipped = {s for s in args.skip.split(",") if s}
    if skipped - set(SECTIONS):
        sys.exit(f"compare: --skip knows {','.join(SECTIONS)}")

    log(f"== machine: {os.cpu_count()} cores, {os.uname().release}, {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}, "
        f"load {os.getloadavg()[0]:.1f}; builds: " + ", ".join(f"{name}={path}" for name, path in daemons))
    work = tempfile.mkdtemp(prefix="cmp-", dir="/tmp")
    results = collections.defaultdict(dict)
    try:
        for section, measure in (("rss", section_rss), ("ready", section_ready), ("e2e", section_e2e),
                                 ("callgrind", section_callgrind)):
            if section in skipped:
                continue
            log()
            for name, values in measure(daemons, args, work).items():
                results[name].update(values)
    finally:
        if args.keep:
            log(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    log()
    log(f"== summary ({time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())})")
    columns = [("rss_kib", "RSS joined+viewer", lambda v: mib(v)),
               ("rss_idle_kib", "RSS idle, no room", lambda v: mib(v)),
               ("ready_ms", "exec→READY", lambda v: f"{v:.2f} ms"),
               ("e2e_p99_ms", "e2e p99 (500/s tracked)", lambda v: f"{v:.2f} ms"),
               ("e2e_python_p99_ms", "python-socketio p99", lambda v: f"{v:.2f} ms"),
               ("instructions_per_overlay", "Ir per tracked overlay", lambda v: f"{v:,.0f}"),
               ("instructions_to_ready", "Ir exec→READY", lambda v: f"{v:,}"),
               ("thread_count", "threads idle", str)]
    shown = [c for c in columns if any(c[0] in results[name] for name, _ in daemons)]
    log("| build | " + " | ".join(title for _, title, _ in shown) + " |")
    log("| --- " * (len(shown) + 1) + "|")
    for name, _ in daemons:
        cells = [fmt(results[name][key]) if key in results[name] else "–" for key, _, fmt in shown]
        log(f"| {name} | " + " | ".join(cells) + " |")
    for name, _ in daemons:
        if "threads" in results[name]:
            log(f"threads {name}: {results[name]['threads']}")


if __name__ == "__main__":
    main()
