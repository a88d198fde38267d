#!/usr/bin/env bash
# Links the release interactived with a symbol order made now from a profile of this very build
# (linker/README.md): builds it, runs it under callgrind (linker/generate-order.py writes the
# order into the build folder, never into the tree), then links it again with
# --symbol-ordering-file. Prints the binary's path on its last line.
#
# Usage: bash linker/link-ordered.sh SWIFT_BUILD_OPTIONS…   e.g. -c release -Xswiftc -static-stdlib
# Needs valgrind (scripts/setup installs it) and python-socketio (tools/backend/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=(swift build "$@")
BIN_DIR=$("${BUILD[@]}" --show-bin-path)
ORDERED=(-Xlinker --symbol-ordering-file="$BIN_DIR/interactived.order" -Xlinker --no-warn-symbol-ordering)
LOG=$(mktemp /tmp/link-ordered-XXXXXX.log)
trap 'rm -f "$LOG"' EXIT
step() {
    if ! "$@" >"$LOG" 2>&1; then
        cat "$LOG" >&2
        echo "link-ordered: failed: $*" >&2
        exit 1
    fi
    { grep -E "warning:" "$LOG" || true; } | sort -u >&2
}
echo "== ${BUILD[*]} --product interactived (to profile)" >&2
step "${BUILD[@]}" --product interactived
echo "== python3 linker/generate-order.py --daemon $BIN_DIR/interactived --out $BIN_DIR/interactived.order" >&2
step python3 linker/generate-order.py --daemon "$BIN_DIR/interactived" --out "$BIN_DIR/interactived.order"
echo "order: $(grep -vc '^#' "$BIN_DIR/interactived.order") functions" >&2
echo "== ${BUILD[*]} --product interactived ${ORDERED[*]}" >&2
step "${BUILD[@]}" --product interactived "${ORDERED[@]}"
echo "$BIN_DIR/interactived"
