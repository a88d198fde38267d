#!/usr/bin/env bash
# Makes linker/interactived.order again from a profile of today's release daemon (linker/README.md):
# builds it, runs it under callgrind (linker/generate-order.py) and writes the functions that ran
# into linker/interactived.order, which every release build links with (Package.swift). Run it
# when build-release.sh reports that much of the order no longer names the binary's functions,
# and commit the file.
#
# Usage: bash linker/update-order.sh [SWIFT_BUILD_OPTIONS…]   (default: -c release -Xswiftc -static-stdlib)
# Needs valgrind (scripts/setup installs it) and python-socketio (tools/backend/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then set -- -c release -Xswiftc -static-stdlib; fi
BUILD=(swift build "$@")
BIN=$("${BUILD[@]}" --show-bin-path)/interactived
echo "== ${BUILD[*]} --product interactived" >&2
"${BUILD[@]}" --product interactived >/dev/null
echo "== python3 linker/generate-order.py --daemon $BIN --out linker/interactived.order" >&2
python3 linker/generate-order.py --daemon "$BIN" --out linker/interactived.order
echo "order: $(grep -vc '^#' linker/interactived.order) functions in linker/interactived.order; the next release build links with it" >&2
