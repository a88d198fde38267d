"""The daemon's heap at the end of each phase of floods.py: how much is in use and where it was
allocated, from a heaptrack recording.

    python3 Benchmarks/floods.py --heap-profile /tmp/floods.heap | tee /tmp/floods.out
    python3 Benchmarks/heap_by_phase.py /tmp/floods.heap /tmp/floods.out

For each `heap-mark` line of floods.py's output, the recording is cut at that moment and
`heaptrack_print` lists the allocations not freed by then (its "leaked" cost): the heap in use.
Each allocation is named after the first frames of its backtrace in the daemon's own modules
(InteractiveDaemon, SocketIO, Runtime, Network, IPCProtocol, HTTP), leaving out generic helpers
(JSONValue, closures, thunks, the event loop), so that `SocketIOCodec.decode` means "decoded
backend events" and `EventEnvelope.line` "event lines" (the replay ring, subscriber queues).
Where an allocation was made is not who holds it: read the figures with the code.
Needs heaptrack (heaptrack_interpret, heaptrack_print) and swift-demangle (the Swift toolchain).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

INTERPRET = "/usr/lib/heaptrack/libexec/heaptrack_interpret"
PROJECT = re.compile(r"\b(InteractiveDaemon|SocketIO|Runtime|Network|IPCProtocol|HTTP)\.")
GENERIC = re.compile(r"JSONValue|closure #|thunk|assumeIsolated|partial apply|EventLoop\.run|DedicatedThread"
                     r"|SocketIOClient\.(opened|perform|drainConsumption|scheduleConsumptionDrain)|Connection\.pump")


def demangler():
    for candidate in (shutil.which("swift-demangle"), "/opt/swift/usr/bin/swift-demangle"):
        if candidate and os.path.exists(candidate):
            return candidate
    sys.exit("heap_by_phase: swift-demangle not found (the Swift toolchain's bin directory)")


def marks(output):
    with open(output) as text:
        return [(match.group(1), int(match.group(2))) for match in re.finditer(r"heap-mark (\S+) (\d+) ms", text.read())]


def stacks_at(lines, cut_ms, scratch):
    """The backtraces of the allocations in use at `cut_ms`, with their bytes."""
    cut = next((index for index, line in enumerate(lines) if line.startswith(b"c ") and int(line[2:], 16) > cut_ms), len(lines))
    data = os.path.join(scratch, "cut.interp")
    stacks = os.path.join(scratch, "cut.stacks")
    with open(data, "wb") as out:
        out.write(b"\n".join(lines[:cut]) + b"\n")
    subprocess.run(["heaptrack_print", "-f", data, "-l", "0", "-p", "0", "-a", "0", "-T", "0",
                    "-F", stacks, "--flamegraph-cost-type", "leaked"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    result = []
    with open(stacks) as text:
        for line in text:
            frames, _, cost = line.rstrip("\n").rpartition(" ")
            if frames:
                result.append(([frame.split(" (")[0] for frame in frames.split(";") if frame], int(cost)))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recording", help="the file given to floods.py --heap-profile")
    parser.add_argument("output", help="floods.py's output (its heap-mark lines)")
    parser.add_argument("--top", type=int, default=6, help="allocation sites per phase (default 6)")
    parser.add_argument("--depth", type=int, default=2, help="project frames that name a site (default 2)")
    args = parser.parse_args()
    phases = marks(args.output)
    if not phases:
        sys.exit("heap_by_phase: no heap-mark lines in the output (run floods.py with --heap-profile)")
    scratch = tempfile.mkdtemp(prefix="heap-by-phase-")
    try:
        interpreted = os.path.join(scratch, "all.interp")
        with open(args.recording, "rb") as raw, open(interpreted, "wb") as out:
            subprocess.run([INTERPRET], stdin=raw, stdout=out, stderr=subprocess.DEVNULL, check=True)
        with open(interpreted, "rb") as data:
            lines = data.read().split(b"\n")
        names = {}
        demangle = demangler()
        for phase, cut_ms in phases:
            stacks = stacks_at(lines, cut_ms, scratch)
            unknown = sorted({frame for frames, _ in stacks for frame in frames if frame not in names})
            if unknown:
                text = subprocess.run([demangle, "--compact"], input="\n".join(unknown), capture_output=True, text=True, check=True).stdout
                names.update(zip(unknown, text.split("\n")))
            sites = collections.Counter()
            for frames, cost in stacks:
                readable = [names.get(frame, frame) for frame in reversed(frames)]
                owners = [re.sub(r" -> .*|\(.*", "", frame) for frame in readable if PROJECT.search(frame) and not GENERIC.search(frame)]
                sites[" < ".join(owners[:args.depth]) if owners else "(runtime, libc: " + readable[0][:50] + ")"] += cost
            total = sum(sites.values())
            print(f"{phase} (at {cut_ms / 1000:.1f} s): heap in use {total / 1048576:.2f} MiB")
            for site, cost in sites.most_common(args.top):
                print(f"  {cost / 1048576:6.2f} MiB  {site[:160]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
