#!/usr/bin/env bash
# Builds ipc-bench (the Benchmarks package, release, static stdlib) with the daemon's internals
# visible (`events` and `store-cost` use @testable import, which needs -enable-testing), the one
# build ipc.sh, end-to-end.sh, overlay-cost.sh and runtime/compare.sh share. The Benchmarks
# package has its own build folder, so the shipped build is untouched. Prints the command and any
# warning on stderr, and the binary's path alone on stdout.
#
# Usage: BENCH=$(bash Benchmarks/build-ipc-bench.sh)
# Env:   BENCH_SCRATCH=DIR  build in DIR/benchmarks (as the other benchmark scripts)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

BUILD=(swift build --package-path Benchmarks -c release -Xswiftc -static-stdlib -Xswiftc -enable-testing
       -Xswiftc -DIPC_BENCH_TESTABLE)
if [ -n "${BENCH_SCRATCH:-}" ]; then BUILD+=(--scratch-path "$BENCH_SCRATCH/benchmarks"); fi
LOG=$(mktemp /tmp/build-ipc-bench-XXXXXX.log)
trap 'rm -f "$LOG"' EXIT
echo "command: ${BUILD[*]} --product ipc-bench" >&2
if ! nice -n 10 "${BUILD[@]}" --product ipc-bench >"$LOG" 2>&1; then
    cat "$LOG" >&2
    echo "build-ipc-bench: the build failed" >&2
    exit 1
fi
# The toolchain's own libFoundationEssentials.a warns about mktemp at every static link.
{ grep -E "warning:" "$LOG" | grep -v "libFoundationEssentials.a" || true; } | sort -u >&2
BENCH="$("${BUILD[@]}" --show-bin-path)/ipc-bench"
[ -x "$BENCH" ] || { echo "build-ipc-bench: $BENCH was not built" >&2; exit 1; }
echo "$BENCH"
