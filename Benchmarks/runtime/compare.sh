#!/usr/bin/env bash
# Issue 11's "Must hold" figures, for a baseline revision and the current tree in the same run:
# (a) RSS joined to a live room of the reference backend with a viewer logged in, idle;
# (b) exec → READY=1; (c) end-to-end p99 at 500 tracked overlays/s beside python-socketio's
# client; (d) instructions per tracked overlay (callgrind); (e) the daemon's threads when idle.
# See Benchmarks/runtime/compare.py for how each is measured.
#
# Both daemons are built the shipped way (swift build -c release -Xswiftc -static-stdlib
# --product interactived; through linker/link-ordered.sh for an older tree that has it, which
# profiled its order at build time instead of committing it): the baseline in a
# git worktree under /tmp (kept between runs, so a second run only builds what changed), the
# current tree in its own .build. Only the built binary is used, so the script does not depend on either tree's layout. The measuring tools
# (ipc-bench, e2e.py, the reference backend) are the current tree's.
#
# Usage: bash Benchmarks/runtime/compare.sh BASE_REV [compare.py options, e.g. --skip callgrind]
# Env:   COMPARE_BASE_BIN=PATH     use this baseline interactived instead of building BASE_REV
#        COMPARE_CURRENT_BIN=PATH  use this interactived instead of building the current tree
#        COMPARE_WORKTREE=DIR      where the baseline worktree goes (default /tmp/cmp-base-<rev>)
#        BENCH_SCRATCH=DIR         build ipc-bench in DIR/benchmarks (as the other benchmark scripts)
#        PYTHON                    the Python with python-socketio and aiohttp (default python3)
# Takes about 3 minutes after the builds on the 2-core development VM.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
PYTHON=${PYTHON:-python3}
[ $# -ge 1 ] || { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
BASE_REV=$1
shift
if ! "$PYTHON" -c "import socketio, aiohttp" 2>/dev/null; then
    echo "compare.sh: needs python-socketio and aiohttp: $PYTHON -m pip install -r tools/backend/requirements.txt" >&2
    exit 1
fi

SHIPPED=(swift build -c release -Xswiftc -static-stdlib)

# Builds the shipped interactived in directory $1 (through linker/link-ordered.sh when the tree is
# older and has it, as its release build did); prints the binary's path.
build_daemon() {
    local log build
    log=$(mktemp /tmp/compare-build-XXXXXX.log)
    if [ -f "$1/linker/link-ordered.sh" ]; then
        build=(bash linker/link-ordered.sh "${SHIPPED[@]:2}")
    else
        build=("${SHIPPED[@]}" --product interactived)
    fi
    echo "command (in $1): ${build[*]}" >&2
    if ! (cd "$1" && nice -n 10 "${build[@]}") >"$log" 2>&1; then
        cat "$log" >&2
        echo "compare.sh: the build in $1 failed" >&2
        exit 1
    fi
    rm -f "$log"
    echo "$(cd "$1" && "${SHIPPED[@]}" --show-bin-path)/interactived"
}

if [ -n "${COMPARE_BASE_BIN:-}" ]; then
    BASE_BIN=$COMPARE_BASE_BIN
else
    BASE_SHA=$(git rev-parse --verify "$BASE_REV^{commit}")
    WORKTREE=${COMPARE_WORKTREE:-/tmp/cmp-base-$(git rev-parse --short "$BASE_SHA")}
    if [ ! -d "$WORKTREE" ]; then
        git worktree add --detach "$WORKTREE" "$BASE_SHA" >&2
    fi
    [ "$(git -C "$WORKTREE" rev-parse HEAD)" = "$BASE_SHA" ] || {
        echo "compare.sh: $WORKTREE is not at $BASE_SHA (remove it: git worktree remove $WORKTREE)" >&2
        exit 1
    }
    BASE_BIN=$(build_daemon "$WORKTREE")
fi
if [ -n "${COMPARE_CURRENT_BIN:-}" ]; then
    CURRENT_BIN=$COMPARE_CURRENT_BIN
else
    CURRENT_BIN=$(build_daemon "$ROOT")
fi

# ipc-bench from the Benchmarks package (ready and subscribe use public API only; the build is the
# one ipc.sh and end-to-end.sh use: Benchmarks/build-ipc-bench.sh).
BENCH=$(bash Benchmarks/build-ipc-bench.sh)

BASE_LABEL="base-$(git rev-parse --short "$BASE_REV" 2>/dev/null || echo "$BASE_REV")"
CURRENT_LABEL="current-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo "+dirty")"
echo "$BASE_LABEL: $BASE_BIN"
echo "$CURRENT_LABEL: $CURRENT_BIN"
exec "$PYTHON" Benchmarks/runtime/compare.py --python "$PYTHON" --ipc-bench "$BENCH" \
    --daemon "$BASE_LABEL=$BASE_BIN" --daemon "$CURRENT_LABEL=$CURRENT_BIN" "$@"
