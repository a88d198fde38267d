#!/usr/bin/env bash
# End to end (issue 5): backend emit → overlay.show read by a subscriber of the daemon, beside
# the python-socketio AsyncClient receiving the same emits from the same sender in the same run.
# Figures: latency p50/p99 at 500 overlays/s; the highest sustained rate (ramp, see e2e.py for
# the definition); RSS of the daemon joined and idle and of the python client. Two passes:
# overlays with _trackingId (as the backend sends them: the daemon emit-acks and stores each
# stage) and without (the relay path alone). Then what the store costs per tracked overlay.
# Targets (PASS/MISS): daemon p99 below the python client's p99; daemon RSS joined and idle ≤ 16 MiB.
#
# Usage: bash Benchmarks/end-to-end.sh     (about 3 minutes after the builds)
# Env:   PYTHON=python3 BENCH_SCRATCH=DIR E2E_RATES=500,750,… E2E_STEP_SECONDS=4
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
RATES=${E2E_RATES:-500,750,1000,1500,2000,3000,4000,5000,6000,8000}
STEP_SECONDS=${E2E_STEP_SECONDS:-4}

if ! "$PYTHON" -c "import socketio, aiohttp" 2>/dev/null; then
    echo "end-to-end.sh: needs python-socketio and aiohttp: $PYTHON -m pip install -r tools/backend/requirements.txt" >&2
    exit 1
fi
bash Benchmarks/build-release.sh
SHIPPED=(swift build -c release -Xswiftc -static-stdlib)
if [ -n "${BENCH_SCRATCH:-}" ]; then SHIPPED+=(--scratch-path "$BENCH_SCRATCH"); fi
BIN_DIR=$("${SHIPPED[@]}" --show-bin-path)
DAEMON="$BIN_DIR/interactived"
# ipc-bench, with the daemon's internals visible for store-cost; the subscriber
# (ipc-bench subscribe) uses only the public IPC client code.
BENCH=$(bash Benchmarks/build-ipc-bench.sh)
SUBSCRIBER="$BENCH"

LOG=$(mktemp /tmp/e2e-XXXXXX.log)
trap 'rm -f "$LOG"' EXIT
run() {
    echo
    echo "\$ $*"
    "$@" | tee -a "$LOG"
}
echo
echo "== machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ); python-socketio $("$PYTHON" -c 'import importlib.metadata as m; print(m.version("python-socketio"))'); figures vary run to run on a shared VM"

echo
echo "== 1. overlays with _trackingId (production shape)"
run "$PYTHON" Benchmarks/e2e.py --daemon "$DAEMON" --ipc-bench "$SUBSCRIBER" --python "$PYTHON" --tracked 1 \
    --latency-rate 500 --latency-seconds 5 --latency-rounds 3 --rates "$RATES" --step-seconds "$STEP_SECONDS"

echo
echo "== 2. overlays without _trackingId (relay path alone)"
run "$PYTHON" Benchmarks/e2e.py --daemon "$DAEMON" --ipc-bench "$SUBSCRIBER" --python "$PYTHON" --tracked 0 \
    --latency-rate 500 --latency-seconds 5 --latency-rounds 3 --rates "$RATES" --step-seconds "$STEP_SECONDS"

echo
echo "== 3. what tracking costs in the store (the daemon's Store, SQLite WAL), disk and tmpfs"
STORE_DIRS="/tmp/e2e-store-$$"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then STORE_DIRS="$STORE_DIRS,/dev/shm/e2e-store-$$"; fi
run "$BENCH" store-cost --dirs "$STORE_DIRS" --count 2000

echo
echo "== summary ($(date -u +%Y-%m-%dT%H:%MZ))"
grep -E "^(PASS|MISS)|^e2e highest" "$LOG" || true
grep -E "^figure" "$LOG" | sed 's/^figure /  /'
