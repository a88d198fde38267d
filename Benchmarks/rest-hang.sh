#!/usr/bin/env bash
# REST never blocks anything (issue 11, item 4), before and after in the same run: builds the
# shipped configuration (release, -static-stdlib) of this tree and of a baseline commit (libcurl
# on Dispatch threads; default aa4b8f9, built in its own git worktree under /tmp), then runs
# Benchmarks/rest-hang.py on both: RSS joined to a live room with a viewer logged in, the local
# API's latency (p50/p99/max of daemon.hello) under 100 REST calls hanging at the backend, and
# SIGTERM → exit with them still hanging. Prints figures; asserts nothing.
#
# Usage: bash Benchmarks/rest-hang.sh
# Env:   BASELINE=COMMIT (default aa4b8f9)  BASELINE_DIR=DIR (default /tmp/interactived-before-COMMIT)
#        BENCH_SCRATCH=DIR  build this tree in DIR instead of .build
#        PYTHON=python3  REST_CALLS=100  PROBES=300
# The baseline links libcurl: building it needs Debian's libcurl4-openssl-dev, which
# scripts/setup no longer installs (apt-get install libcurl4-openssl-dev).
set -euo pipefail
cd "$(dirname "$0")/.."

BASELINE=${BASELINE:-aa4b8f9}
BASELINE_DIR=${BASELINE_DIR:-/tmp/interactived-before-$BASELINE}
PYTHON=${PYTHON:-python3}
SCRATCH=()
if [ -n "${BENCH_SCRATCH:-}" ]; then SCRATCH=(--scratch-path "$BENCH_SCRATCH"); fi

if [ ! -e /usr/include/x86_64-linux-gnu/curl/curl.h ] && [ ! -e /usr/include/curl/curl.h ]; then
    echo "rest-hang: the baseline needs libcurl's headers: apt-get install libcurl4-openssl-dev" >&2
    exit 1
fi
if [ ! -d "$BASELINE_DIR" ]; then
    git worktree add --detach "$BASELINE_DIR" "$BASELINE"
fi

build() {
    local directory=$1
    shift
    echo "\$ (cd $directory && swift build -c release -Xswiftc -static-stdlib --product interactived $*)" >&2
    (cd "$directory" && nice -n 10 swift build -c release -Xswiftc -static-stdlib --product interactived "$@" >/dev/null)
    echo "$(cd "$directory" && swift build -c release -Xswiftc -static-stdlib "$@" --show-bin-path)/interactived"
}

BEFORE=$(build "$BASELINE_DIR" | tail -1)
AFTER=$(build . "${SCRATCH[@]}" | tail -1)
echo "before: $BEFORE ($(git -C "$BASELINE_DIR" log --oneline -1))"
echo "after:  $AFTER ($(git log --oneline -1))"
echo "\$ $PYTHON Benchmarks/rest-hang.py before=… after=… --calls ${REST_CALLS:-100} --probes ${PROBES:-300}"
"$PYTHON" Benchmarks/rest-hang.py "before=$BEFORE" "after=$AFTER" --calls "${REST_CALLS:-100}" --probes "${PROBES:-300}"
