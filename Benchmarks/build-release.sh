#!/usr/bin/env bash
# Builds the shipped configuration of interactived (release, Swift stdlib and Foundation linked
# statically), checks that the binary links no Swift or Foundation shared library and no
# URLSession, and prints the binary's path and size.
#
# Usage: bash Benchmarks/build-release.sh
# Env:   BENCH_SCRATCH=DIR  build in DIR instead of .build (SwiftPM's --scratch-path)
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=()
if [ -n "${BENCH_SCRATCH:-}" ]; then SCRATCH=(--scratch-path "$BENCH_SCRATCH"); fi
BUILD=(swift build -c release -Xswiftc -static-stdlib "${SCRATCH[@]}")

LOG=$(mktemp /tmp/build-release-XXXXXX.log)
trap 'rm -f "$LOG"' EXIT
echo "command: ${BUILD[*]}"
if ! "${BUILD[@]}" >"$LOG" 2>&1; then
    cat "$LOG"
    echo "build-release: the build failed" >&2
    exit 1
fi
# Warnings: the only one expected comes from the toolchain's own static Foundation archive
# (libFoundationEssentials.a uses mktemp); anything else is the package's and is shown as is.
{ grep -E "warning:" "$LOG" || true; } | sort -u | while IFS= read -r line; do
    case "$line" in
        *libFoundationEssentials.a*mktemp*) echo "note: linker warning from the toolchain's libFoundationEssentials.a (mktemp), not from this package" ;;
        *) echo "$line" ;;
    esac
done

BIN_DIR=$("${BUILD[@]}" --show-bin-path)
BIN="$BIN_DIR/interactived"
[ -x "$BIN" ] || { echo "build-release: $BIN is missing" >&2; exit 1; }

LIBS=$(ldd "$BIN")
if echo "$LIBS" | grep -Eq 'libswift|libFoundation|libdispatch|libBlocksRuntime'; then
    echo "$LIBS"
    echo "build-release: FAIL: the binary links a Swift/Foundation shared library (not a static-stdlib build)" >&2
    exit 1
fi
echo "check: ldd shows no libswiftCore.so, libFoundation*.so, libdispatch.so: the Swift runtime and Foundation are static"
if nm "$BIN" 2>/dev/null | grep -q 'URLSession'; then
    echo "build-release: FAIL: URLSession symbols are linked (FoundationNetworking)" >&2
    exit 1
fi
echo "check: no URLSession (FoundationNetworking) symbol in the binary"

SIZE=$(stat -c %s "$BIN")
STRIPPED=$(mktemp /tmp/interactived-stripped-XXXXXX)
strip -o "$STRIPPED" "$BIN"
STRIPPED_SIZE=$(stat -c %s "$STRIPPED")
rm -f "$STRIPPED"
echo "dynamic libraries: $(echo "$LIBS" | grep -c '=>') ($(echo "$LIBS" | awk '/=>/ {printf "%s ", $1}'))"
echo "binary: $BIN"
awk -v s="$SIZE" -v t="$STRIPPED_SIZE" 'BEGIN { printf "size: %d bytes (%.1f MiB); stripped: %d bytes (%.1f MiB)\n", s, s / 1048576, t, t / 1048576 }'
