#!/usr/bin/env bash
# The local API's figures (issue 2), each printed after the command that reproduces it:
#   1. exec → READY=1 of the release interactived (own NOTIFY_SOCKET), and its idle RSS;
#   2. daemon.status requests/s over 1 and 16 connections, request/response and pipelined,
#      beside a fixed-reply Unix-socket server (the baseline) measured in turn in the same run;
#   3. events/s from EventBus.publish to 1, 10 and 100 socket subscribers (in-process IPC
#      server, ipc-bench events), beside the same lines over plain socketpairs (ipc-bench
#      raw-events), encoded once per event as the bus does, and pre-encoded (transport only).
# Targets (PASS/MISS): READY=1 within 20 ms of exec (median), idle RSS ≤ 16 MiB,
# ≥ 100,000 events/s to one subscriber.
#
# Usage: bash Benchmarks/ipc.sh            (about 3 minutes after the builds)
# Env:   READY_RUNS=25 RPC_SECONDS=1.5 RPC_ROUNDS=3 EVENTS=200000 EVENT_SECONDS=4 BENCH_SCRATCH=DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
READY_RUNS=${READY_RUNS:-25}
RPC_SECONDS=${RPC_SECONDS:-1.5}
RPC_ROUNDS=${RPC_ROUNDS:-3}
EVENTS=${EVENTS:-200000}
EVENT_SECONDS=${EVENT_SECONDS:-4}

# The shipped daemon, and ipc-bench (the Benchmarks package) built with the daemon's internals
# visible (@testable import needs -enable-testing; the Benchmarks package has its own build folder,
# so the shipped build is untouched).
bash Benchmarks/build-release.sh
SHIPPED=(swift build -c release -Xswiftc -static-stdlib)
if [ -n "${BENCH_SCRATCH:-}" ]; then SHIPPED+=(--scratch-path "$BENCH_SCRATCH"); fi
DAEMON="$("${SHIPPED[@]}" --show-bin-path)/interactived"
BENCH=$(bash Benchmarks/build-ipc-bench.sh)

# Short paths (Unix socket paths are limited to 107 bytes); state in a tmpfs when there is one.
WORK=$(mktemp -d /tmp/ipcb-XXXXXX)
if [ -d /dev/shm ] && [ -w /dev/shm ]; then STATE_ROOT=$(mktemp -d /dev/shm/ipcb-XXXXXX); else STATE_ROOT=$WORK; fi
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK" "$STATE_ROOT"
}
trap cleanup EXIT
LOG="$WORK/ipc.log"
run() {
    echo
    echo "\$ $*"
    "$@" | tee -a "$LOG"
}

echo
echo "== machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ); figures vary run to run on a shared VM"

echo
echo "== 1. exec → READY=1 and idle RSS (state directory in $STATE_ROOT)"
run "$BENCH" ready --daemon "$DAEMON" --dir "$STATE_ROOT/ready" --runs "$READY_RUNS" --idle-seconds 2 --idle-runs 3 \
    --target-ms 20 --target-rss-mib 16

echo
echo "== 2. daemon.status requests/s (shipped daemon vs a fixed-reply server of the same reply size)"
echo "\$ $DAEMON --socket $WORK/d.sock --state-directory $STATE_ROOT/rpc-state --config $WORK/absent-config.json --log-target stderr &"
env -u NOTIFY_SOCKET -u LISTEN_FDS -u LISTEN_PID -u JOURNAL_STREAM "$DAEMON" --socket "$WORK/d.sock" \
    --state-directory "$STATE_ROOT/rpc-state" --config "$WORK/absent-config.json" --log-target stderr 2>"$WORK/daemon.stderr" &
PIDS+=($!)
REPLY=""
for _ in $(seq 1 100); do
    if REPLY=$("$BENCH" rpc --probe "$WORK/d.sock" 2>/dev/null); then break; fi
    sleep 0.05
done
REPLY_BYTES=$(echo "$REPLY" | awk '/^reply_bytes/ {print $2}')
[ -n "$REPLY_BYTES" ] || { echo "ipc.sh: the daemon did not answer daemon.status"; cat "$WORK/daemon.stderr"; exit 1; }
echo "\$ $BENCH fixed-reply-server --socket $WORK/f.sock --reply-bytes $REPLY_BYTES --max-seconds 300 &"
"$BENCH" fixed-reply-server --socket "$WORK/f.sock" --reply-bytes "$REPLY_BYTES" --max-seconds 300 >/dev/null &
PIDS+=($!)
for _ in $(seq 1 100); do [ -S "$WORK/f.sock" ] && break; sleep 0.05; done
echo "daemon.status reply: $REPLY_BYTES bytes; the baseline answers every line with $REPLY_BYTES canned bytes (no parsing)"
for shape in "1 1" "16 1" "1 32" "16 32"; do
    set -- $shape
    run "$BENCH" rpc --targets "daemon=$WORK/d.sock,baseline=$WORK/f.sock" --connections "$1" --depth "$2" \
        --seconds "$RPC_SECONDS" --rounds "$RPC_ROUNDS"
done
for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
PIDS=()

echo
echo "== 3. events/s to N subscribers (in-process IPC server: UnixListener, IPCServer, ClientConnection,"
echo "      OutboundQueue, EventBus; producer = EventBus.publish; only lines read by the clients count)"
for subscribers in 1 10 100; do
    run "$BENCH" raw-events --subscribers "$subscribers" --events $((EVENTS * 10)) --seconds "$EVENT_SECONDS" --encode 0
    run "$BENCH" raw-events --subscribers "$subscribers" --events "$EVENTS" --seconds "$EVENT_SECONDS" --encode 1
    run "$BENCH" events --dir "$STATE_ROOT/events" --subscribers "$subscribers" --events "$EVENTS" \
        --seconds "$EVENT_SECONDS" --modes window --target 100000
done
run "$BENCH" events --dir "$STATE_ROOT/events" --subscribers 1,10,100 --events "$EVENTS" --seconds "$EVENT_SECONDS" --modes flood

echo
echo "== summary ($(date -u +%Y-%m-%dT%H:%MZ))"
grep -E "^(PASS|MISS)" "$LOG" || true
grep -E "^figure" "$LOG" | sed 's/^figure /  /'
awk '$1 == "figure" { v[$2] = $3 } END {
    for (i = 1; i <= 3; i++) { n = (i == 1 ? 1 : (i == 2 ? 10 : 100))
        d = v["events.window.s" n]; e = v["baseline.encoded.s" n]; p = v["baseline.preencoded.s" n]
        if (d && e && p) printf "  events to %d subscriber(s): daemon / (encode + write) = %.2f, daemon / (pre-encoded write) = %.3f\n", n, d / e, d / p }
}' "$LOG"
