#!/usr/bin/env bash
# Experiment behind Benchmarks/README.md (RSS): builds a throw-away copy of the package in which
# the daemon imports FoundationEssentials instead of Foundation (the 8 files and main.swift that
# import Foundation; essentials_shim.swift stands in for Thread, NSString's deletingLastPathComponent,
# FileHandle.standardError, NSHomeDirectory, trimmingCharacters and range(of:)), then measures
# exec → READY=1 and idle RSS of both binaries with ipc-bench ready, one after the other.
# The work tree is not touched. If the daemon starts using other Foundation-only APIs, the copy
# stops building and the shim needs them too.
# Usage: bash Benchmarks/experiments/foundation-essentials.sh   (about 2 min; runs build-release.sh first)
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Benchmarks/build-release.sh >/dev/null
SHIPPED=(swift build -c release -Xswiftc -static-stdlib)
if [ -n "${BENCH_SCRATCH:-}" ]; then SHIPPED+=(--scratch-path "$BENCH_SCRATCH"); fi
BIN_DIR=$("${SHIPPED[@]}" --show-bin-path)

WORK=$(mktemp -d /tmp/fe-XXXXXX)
STATE=$(mktemp -d /tmp/fe-state-XXXXXX)
# SwiftPM also leaves lock files named after the scratch path in /tmp.
trap 'rm -rf "$WORK" "$STATE"; rm -f "/tmp/_tmp_$(basename "$WORK")_.build"*.lock' EXIT
cp -r Package.swift Sources Tests "$WORK/"
for file in $(grep -rl '^import Foundation$' "$WORK/Sources/InteractiveDaemon" "$WORK/Sources/interactived"); do
    sed -i 's/^import Foundation$/import FoundationEssentials\nimport Dispatch/' "$file"
done
sed -i '1i import Glibc' "$WORK/Sources/interactived/main.swift"
sed -i 's/(path as NSString).deletingLastPathComponent/essentialsParentFolder(path)/' "$WORK/Sources/InteractiveDaemon/IPC/UnixListener.swift"
cp Benchmarks/experiments/essentials_shim.swift "$WORK/Sources/InteractiveDaemon/EssentialsShim.swift"
echo "\$ (in a copy patched as above) swift build -c release -Xswiftc -static-stdlib --product interactived"
(cd "$WORK" && swift build -c release -Xswiftc -static-stdlib --product interactived 2>&1 | grep -E "error" | sort -u) || true
EXPERIMENT="$WORK/.build/release/interactived"
[ -x "$EXPERIMENT" ] || { echo "the FoundationEssentials copy did not build (see the errors above)"; exit 1; }
if nm "$EXPERIMENT" | grep -q FoundationInternationalization; then echo "note: FoundationInternationalization is still linked"; fi
for binary in "$BIN_DIR/interactived" "$EXPERIMENT"; do
    echo
    echo "== $binary: $(stat -c %s "$binary") bytes"
    echo "\$ $BIN_DIR/ipc-bench ready --daemon $binary --dir $STATE/ready --runs 15 --idle-runs 3"
    rm -rf "$STATE/ready"
    "$BIN_DIR/ipc-bench" ready --daemon "$binary" --dir "$STATE/ready" --runs 15 --idle-runs 3 | grep -E "^ready|^rss|where|PASS|MISS"
done
