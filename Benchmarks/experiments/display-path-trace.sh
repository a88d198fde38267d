#!/bin/bash
# Where the time of the display path goes, stage by stage: builds this tree with
# display-path-trace.patch applied (timestamps taken on the event loop, printed per overlay.show
# to stderr: a diagnostic, never shipped), runs Benchmarks/e2e.py at 500 tracked overlays/s and
# prints each stage's p50/p90/p99 from the backend's sentAt to the write of overlay.show.
#   bash Benchmarks/experiments/display-path-trace.sh [BASE_COMMIT]   (default: HEAD; ~3 min)
# The patch is made against the commit that added it; a later tree may need it refreshed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=${1:-HEAD}
export PATH=/opt/swift/usr/bin:$PATH
work=$(mktemp -d /tmp/display-trace-XXXXXX)
trap 'git -C "$root" worktree remove --force "$work/tree" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/tree" "$base"
git -C "$work/tree" apply "$here/display-path-trace.patch"
(cd "$work/tree" && swift build -c release -Xswiftc -static-stdlib --product interactived 2>&1 | tail -1)
(cd "$root/Benchmarks" && swift build -c release --product ipc-bench 2>&1 | tail -1)
python3 "$root/Benchmarks/e2e.py" --daemon "$work/tree/.build/release/interactived" \
    --ipc-bench "$root/Benchmarks/.build/release/ipc-bench" --latency-seconds 5 --latency-rounds 3 --rates "" \
    --keep-daemon-log "$work/daemon.stderr" | grep "median of rounds"
PYTHONPATH="$root/Benchmarks" python3 - "$work/daemon.stderr" <<'PY'
import sys
from benchlib.stats import percentile
names = ["sent", "wake", "recv", "decoded", "room", "acked", "arrived", "publish", "written"]
rows = [list(map(float, line.split()[1:])) for line in open(sys.argv[1]) if line.startswith("TRACE ")]
print(f"{len(rows)} overlays; ms per stage (wall clock; sent is the backend's sentAt)")
spans = [(f"{names[i]} → {names[i + 1]}", i, i + 1) for i in range(len(names) - 1)]
spans += [("wake → written (in the daemon)", 1, 8), ("sent → written", 0, 8)]
for label, a, b in spans:
    xs = [r[b] - r[a] for r in rows]
    print(f"  {label:32s} p50 {percentile(xs, 50):.3f}  p90 {percentile(xs, 90):.3f}  p99 {percentile(xs, 99):.3f}")
PY
