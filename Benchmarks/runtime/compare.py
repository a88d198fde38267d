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
  (e) threads when idle: the names of the threads (/proc/PID/task/*/stat) of the daemon of (a).

Usage: python3 Benchmarks/runtime/compare.py --daemon base=PATH --daemon current=PATH --ipc-bench PATH
       [--runs 3] [--ready-runs 15] [--ready-rounds 3] [--overlays 200] [--skip e2e,callgrind,...]
Benchmarks/runtime/compare.sh builds the daemons and ipc-bench, then runs this.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCHMARKS = os.path.dirname(HERE)
sys.path.insert(0, BENCHMARKS)  # benchlib, shared with the other benchmark scripts

from benchlib import callgrind, measures
from benchlib.stats import median, mib

SECTIONS = ("rss", "ready", "e2e", "callgrind")


def log(text=""):
    print(text, flush=True)


def describe_threads(names):
    """The names, each once with its count: "main, interactived.ev, com.apple.root.default-qos ×2, …"."""
    counted = collections.Counter(names)
    return ", ".join(f"{thread} ×{count}" if count > 1 else thread for thread, count in sorted(counted.items()))


# (a) and (e) ------------------------------------------------------------------------------------

def section_rss(daemons, args, work):
    log(f"== (a) RSS joined to a live room of the reference backend, viewer logged in, idle {args.idle_seconds:.0f} s; "
        f"(e) threads; {args.runs} daemons per build, taken in turn")
    samples = collections.defaultdict(list)
    threads = {}
    for number in range(args.runs):
        for name, path in daemons:
            joined = measures.rss_joined_with_viewer(path, args.python, work, args.idle_seconds)
            status, names = joined["status"], joined["threads"]
            samples[name].append(status)
            threads[name] = names
            log(f"  run {number + 1} {name}: VmRSS {mib(status['VmRSS'])} (RssAnon {mib(status['RssAnon'])}, "
                f"RssFile {mib(status['RssFile'])}), {len(names)} threads; REST: {', '.join(joined['rest'])}")
    results = {}
    for name, _ in daemons:
        rss = median([s["VmRSS"] for s in samples[name]])
        anon = median([s["RssAnon"] for s in samples[name]])
        file_backed = median([s["RssFile"] for s in samples[name]])
        described = describe_threads(threads[name])
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
        e2e = measures.e2e_latency(path, args.ipc_bench, args.python, args.e2e_rate, args.e2e_seconds, args.e2e_rounds)
        for line in e2e["lines"]:
            log(f"  {name}: {line}")
        daemon_p99, python_p99 = e2e["daemon_p99_ms"], e2e["python_p99_ms"]
        ratio = daemon_p99 / python_p99 if python_p99 else float("nan")
        log(f"  {name}: daemon p99 {daemon_p99:.2f} ms, python-socketio p99 {python_p99:.2f} ms (ratio {ratio:.2f})")
        log(f"figure {name}.e2e_p99_ms {daemon_p99:.2f}")
        log(f"figure {name}.e2e_python_p99_ms {python_p99:.2f}")
        results[name] = {"e2e_p99_ms": daemon_p99, "e2e_python_p99_ms": python_p99, "e2e_ratio": ratio}
    return results


# (d) --------------------------------------------------------------------------------------------

def section_callgrind(daemons, args, work):
    if not callgrind.available():
        log("== (d) skipped: valgrind is not installed (apt-get install valgrind)")
        return {}
    log(f"== (d) CPU per tracked overlay: valgrind --tool=callgrind, {args.overlays} tracked overlays at "
        f"{args.callgrind_rate:.0f}/s to a joined daemon with one subscriber; instructions (Ir) of every thread")
    results = {}
    for name, path in daemons:
        counted = measures.instructions_per_overlay(path, args.python, work, args.overlays, args.callgrind_rate)
        to_ready, total, sent = counted["daemon_to_ready"], counted["daemon_total"], counted["sent"]
        per_overlay = counted["daemon_per_overlay"]
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
