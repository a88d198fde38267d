#!/usr/bin/env bash
# The fleet simulation (docs/fleet.md): builds fleet-sim, runs 100,000 devices through a 5-minute
# backend outage with the daemon's own backoff and ack outbox, prints the figures, writes the
# per-second CSV and draws it (matplotlib, from requirements.txt).
#
# Usage: bash Benchmarks/fleet/run.sh [fleet-sim options, e.g. --accept-per-second 2000]
# Env:   BENCH_SCRATCH=DIR  build in DIR instead of .build (SwiftPM's --scratch-path)
#        FLEET_PNG=FILE     where to draw (default: docs/fleet-reconnect.png without options,
#                           /tmp/fleet-reconnect.png with options)
#        PYTHON             the Python that has matplotlib (default python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

SCRATCH=()
if [ -n "${BENCH_SCRATCH:-}" ]; then SCRATCH=(--scratch-path "$BENCH_SCRATCH/benchmarks"); fi
# fleet-sim is a product of the Benchmarks package (Benchmarks/Package.swift).
swift build --package-path Benchmarks "${SCRATCH[@]}" --product fleet-sim
BIN=$(swift build --package-path Benchmarks "${SCRATCH[@]}" --show-bin-path)

if [ $# -eq 0 ]; then
    PNG=${FLEET_PNG:-docs/fleet-reconnect.png}
    TITLE="100,000 devices, backend away 5 min, the daemon's default backoff (seed 1)"
else
    PNG=${FLEET_PNG:-/tmp/fleet-reconnect.png}
    TITLE="fleet-sim $*"
fi
CSV=$(mktemp /tmp/fleet-XXXXXX.csv)
trap 'rm -f "$CSV"' EXIT

echo "command: $BIN/fleet-sim --csv $CSV $*"
"$BIN/fleet-sim" --csv "$CSV" "$@"
"${PYTHON:-python3}" Benchmarks/fleet/plot.py "$CSV" "$PNG" "$TITLE"
echo "plot: $PNG"
