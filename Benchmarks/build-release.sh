#!/usr/bin/env bash
# Builds the shipped configuration of interactived (release, Swift stdlib linked statically, no
# Foundation, linked with the committed symbol order: linker/README.md), checks that the binary
# links no Swift or Foundation shared library and no
# URLSession, and prints the binary's path and size; then the same for interactivectl, whose
# stripped binary must stay under 20 MB (it uses FoundationEssentials only: no ICU data).
#
# Usage: bash Benchmarks/build-release.sh
# Env:   BENCH_SCRATCH=DIR  build in DIR instead of .build (SwiftPM's --scratch-path)
set -euo pipefail
cd "$(dirname "$0")/.."

SCRATCH=()
if [ -n "${BENCH_SCRATCH:-}" ]; then SCRATCH=(--scratch-path "$BENCH_SCRATCH"); fi
RELEASE=(-c release -Xswiftc -static-stdlib "${SCRATCH[@]}")
BUILD=(swift build "${RELEASE[@]}")

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
if nm "$BIN" 2>/dev/null | grep -q 'FoundationEssentials'; then
    echo "build-release: FAIL: the daemon links Foundation (it uses Glibc only: LocalFiles.swift)" >&2
    exit 1
fi
echo "check: no Foundation symbol in the daemon"

# The size in bytes of binary $1 once stripped (a stripped copy, removed after).
stripped_size() {
    local copy
    copy=$(mktemp /tmp/stripped-XXXXXX)
    strip -o "$copy" "$1"
    stat -c %s "$copy"
    rm -f "$copy"
}

# How much of the committed order still names functions of this binary (a stale order costs
# memory, never behaviour: linker/update-order.sh makes it again).
ORDERED=$(grep -v '^#' linker/interactived.order | sort -u)
FOUND=$(comm -12 <(echo "$ORDERED") <(nm --defined-only "$BIN" | awk '{print $3}' | sort -u) | wc -l)
echo "order: $FOUND of $(echo "$ORDERED" | wc -l) functions named in linker/interactived.order are in the binary"

SIZE=$(stat -c %s "$BIN")
STRIPPED_SIZE=$(stripped_size "$BIN")
echo "dynamic libraries: $(echo "$LIBS" | grep -c '=>') ($(echo "$LIBS" | awk '/=>/ {printf "%s ", $1}'))"
echo "binary: $BIN"
awk -v s="$SIZE" -v t="$STRIPPED_SIZE" 'BEGIN { printf "size: %d bytes (%.1f MiB); stripped: %d bytes (%.1f MiB)\n", s, s / 1048576, t, t / 1048576 }'

# interactivectl: the same static build, FoundationEssentials only, stripped under 20 MB.
CTL="$BIN_DIR/interactivectl"
[ -x "$CTL" ] || { echo "build-release: $CTL is missing" >&2; exit 1; }
CTL_LIBS=$(ldd "$CTL")
if echo "$CTL_LIBS" | grep -Eq 'libswift|libFoundation|libdispatch|libBlocksRuntime|libicu'; then
    echo "$CTL_LIBS"
    echo "build-release: FAIL: interactivectl links a Swift/Foundation/ICU shared library" >&2
    exit 1
fi
CTL_SIZE=$(stat -c %s "$CTL")
CTL_STRIPPED_SIZE=$(stripped_size "$CTL")
CTL_LIMIT=20000000
echo "interactivectl dynamic libraries: $(echo "$CTL_LIBS" | grep -c '=>') ($(echo "$CTL_LIBS" | awk '/=>/ {printf "%s ", $1}'))"
echo "interactivectl binary: $CTL"
awk -v s="$CTL_SIZE" -v t="$CTL_STRIPPED_SIZE" 'BEGIN { printf "interactivectl size: %d bytes (%.1f MiB); stripped: %d bytes (%.1f MiB)\n", s, s / 1048576, t, t / 1048576 }'
echo "sizes stripped: interactived $STRIPPED_SIZE bytes, interactivectl $CTL_STRIPPED_SIZE bytes (limit $CTL_LIMIT)"
if [ "$CTL_STRIPPED_SIZE" -ge "$CTL_LIMIT" ]; then
    echo "build-release: FAIL: interactivectl stripped is $CTL_STRIPPED_SIZE bytes, over the $CTL_LIMIT-byte budget" >&2
    exit 1
fi
echo "check: interactivectl stripped is under 20 MB"
