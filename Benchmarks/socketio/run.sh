#!/usr/bin/env bash
# Benchmark: SocketIOClient (release, static stdlib) vs python-socketio's AsyncClient, both
# against the same local sender (Benchmarks/socketio/sender.py) in the same run, alternating, ROUNDS times.
# Usage: Benchmarks/socketio/run.sh [count] [rate] [seconds] [rounds]
set -euo pipefail
cd "$(dirname "$0")/../.."
COUNT=${1:-50000}
RATE=${2:-500}
SECONDS_AT_RATE=${3:-10}
ROUNDS=${4:-3}
PYTHON=${PYTHON:-python3}

swift build --package-path Benchmarks -c release --static-swift-stdlib --product sio-bench >/dev/null
BENCH=$(swift build --package-path Benchmarks -c release --static-swift-stdlib --show-bin-path)/sio-bench

LOG=$(mktemp)
RESULTS=$(mktemp)
"$PYTHON" -u Benchmarks/socketio/sender.py --prepare "$COUNT" >"$LOG" 2>&1 &
SENDER=$!
trap 'kill $SENDER 2>/dev/null || true; rm -f "$LOG" "$RESULTS"' EXIT
for _ in $(seq 1 300); do grep -q READY "$LOG" && break; sleep 0.1; done
PORT=$(awk '/READY/ {print $2}' "$LOG")
[ -n "$PORT" ] || { echo "sender did not start:"; cat "$LOG"; exit 1; }

echo "command: Benchmarks/socketio/run.sh $COUNT $RATE $SECONDS_AT_RATE $ROUNDS"
echo "sender 127.0.0.1:$PORT; per round: $COUNT events as fast as possible, then $RATE events/s for ${SECONDS_AT_RATE} s; 1 KiB payloads"
for round in $(seq 1 "$ROUNDS"); do
    "$BENCH" --url "ws://127.0.0.1:$PORT" --count "$COUNT" --rate "$RATE" --seconds "$SECONDS_AT_RATE" --size 1024 | tee -a "$RESULTS"
    "$PYTHON" Benchmarks/socketio/py_client.py --url "http://127.0.0.1:$PORT" --count "$COUNT" --rate "$RATE" --seconds "$SECONDS_AT_RATE" --size 1024 | tee -a "$RESULTS"
done
"$PYTHON" - "$RESULTS" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def name(row):
    return row["client"] + (" / " + row["consumer"] if "consumer" in row else "")
def median(client, key):
    return statistics.median(r[key] for r in rows if name(r) == client)
names = list(dict.fromkeys(name(r) for r in rows))
print()
print(f"{'median of rounds':<40}{'events/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'RSS KiB':>10}{'peak KiB':>10}")
for client in names:
    print(f"{client:<40}{median(client, 'events_per_second'):>10.0f}{median(client, 'p50_ms'):>9.3f}"
          f"{median(client, 'p99_ms'):>9.3f}{median(client, 'rss_kib'):>10.0f}{median(client, 'peak_rss_kib'):>10.0f}")
python = "python-socketio"
for client in names:
    if client == python:
        continue
    print(f"{client}: throughput {median(client, 'events_per_second') / median(python, 'events_per_second'):.1f}x, "
          f"p99 {median(client, 'p99_ms') / median(python, 'p99_ms'):.2f}x, "
          f"RSS {median(client, 'rss_kib') / median(python, 'rss_kib'):.2f}x python-socketio's")
PY
