#!/usr/bin/env bash
# Experiment behind Benchmarks/README.md (events/s): encodes the same overlay.show event line
# with the daemon's JSONValue serializer and with a prototype that writes the same bytes
# (json_encode_prototype.swift), 5 rounds of 20,000, side by side.
# Usage: bash Benchmarks/experiments/json-encode.sh   (about 30 s)
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=$(mktemp -d /tmp/json-encode-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp Sources/JSONValue/*.swift "$WORK/"
cp Benchmarks/experiments/json_encode_prototype.swift "$WORK/main.swift"
echo "\$ swiftc -O -wmo -module-name JSONValue Sources/JSONValue/*.swift Benchmarks/experiments/json_encode_prototype.swift"
swiftc -O -wmo -module-name JSONValue "$WORK"/*.swift -o "$WORK/json-encode"
"$WORK/json-encode"
