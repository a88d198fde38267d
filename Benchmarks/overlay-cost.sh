#!/usr/bin/env bash
# What a tracked overlay costs the daemon, beside python-socketio's client measured in the same
# run on the same work: issue 22's "Must hold" figures (highest rate from a C sender, CPU per
# tracked overlay and per thread, latency p99 at 500/s, instructions per tracked overlay under
# callgrind, RSS joined with a viewer logged in), --runs times, each run's table and a summary
# against the thresholds. How each is measured: Benchmarks/overlay_cost.py and Benchmarks/README.md.
#
# Usage: bash Benchmarks/overlay-cost.sh [--runs N] [--daemon PATH] [overlay_cost.py options]
#        (without --daemon: the current tree's shipped build, by Benchmarks/build-release.sh;
#        other options, e.g. --skip callgrind or --count 20000: python3 Benchmarks/overlay_cost.py --help)
# Env:   PYTHON=python3 (with python-socketio and aiohttp)  CC=gcc  BENCH_SCRATCH=DIR
# Takes about 3 minutes a run after the builds on the 2-core development VM.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
PYTHON=${PYTHON:-python3}
CC=${CC:-gcc}

DAEMON=""
PASSED=()
while [ $# -gt 0 ]; do
    case "$1" in
        --daemon) [ $# -ge 2 ] || { echo "overlay-cost.sh: --daemon needs a path" >&2; exit 64; }; DAEMON=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) PASSED+=("$1"); shift ;;
    esac
done
if ! "$PYTHON" -c "import socketio, aiohttp" 2>/dev/null; then
    echo "overlay-cost.sh: needs python-socketio and aiohttp: $PYTHON -m pip install -r tools/backend/requirements.txt" >&2
    exit 1
fi

if [ -z "$DAEMON" ]; then
    bash Benchmarks/build-release.sh >&2
    SHIPPED=(swift build -c release -Xswiftc -static-stdlib)
    if [ -n "${BENCH_SCRATCH:-}" ]; then SHIPPED+=(--scratch-path "$BENCH_SCRATCH"); fi
    DAEMON="$("${SHIPPED[@]}" --show-bin-path)/interactived"
fi
BENCH=$(bash Benchmarks/build-ipc-bench.sh)

# The C sender, built once per version of its source (its SHA-256 names the binary).
CACHE="${BENCH_SCRATCH:-Benchmarks/.build}/burst-sender"
SOURCE=Benchmarks/burst_sender.c
SENDER="$CACHE/burst_sender-$(sha256sum "$SOURCE" | cut -c1-16)"
if [ ! -x "$SENDER" ]; then
    mkdir -p "$CACHE"
    rm -f "$CACHE"/burst_sender-*  # builds of earlier versions of the source
    BUILD=("$CC" -O2 -Wall -Wextra -Werror -o "$SENDER.tmp" "$SOURCE" -lcrypto)
    echo "command: ${BUILD[*]}" >&2
    "${BUILD[@]}"
    mv "$SENDER.tmp" "$SENDER"
fi

echo "command: $PYTHON Benchmarks/overlay_cost.py --daemon $DAEMON --ipc-bench $BENCH --sender $SENDER ${PASSED[*]:-}"
exec "$PYTHON" Benchmarks/overlay_cost.py --daemon "$DAEMON" --ipc-bench "$BENCH" --sender "$SENDER" --python "$PYTHON" \
    ${PASSED[@]+"${PASSED[@]}"}
