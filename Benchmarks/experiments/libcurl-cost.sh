#!/usr/bin/env bash
# Experiment behind Benchmarks/README.md ("REST on the event loop"): what linking Debian's
# libcurl costs a process that never calls it. The same empty C program, built without and
# with -lcurl: VmRSS while it sleeps, and exec → exit over 50 runs (median), one after the other.
# Usage: bash Benchmarks/experiments/libcurl-cost.sh   (about 10 s; needs gcc and libcurl4-openssl-dev)
set -euo pipefail
WORK=$(mktemp -d /tmp/libcurl-cost-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
printf '#include <unistd.h>\nint main(int argc, char **argv) { if (argc > 1) sleep(2); return 0; }\n' >"$WORK/idle.c"
echo "\$ gcc -O2 idle.c -o idle; gcc -O2 idle.c -o idle-curl -Wl,--no-as-needed -lcurl"
gcc -O2 "$WORK/idle.c" -o "$WORK/idle"
gcc -O2 "$WORK/idle.c" -o "$WORK/idle-curl" -Wl,--no-as-needed -lcurl
for program in idle idle-curl; do
    "$WORK/$program" sleep &
    pid=$!
    sleep 1
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
    wait "$pid"
    times=()
    for _ in $(seq 1 50); do
        start=$(date +%s%N)
        "$WORK/$program"
        times+=($(( $(date +%s%N) - start )))
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    libraries=$(ldd "$WORK/$program" | grep -c '=>' || true)
    awk -v p="$program" -v r="$rss" -v m="$median" -v l="$libraries" \
        'BEGIN { printf "%-9s %2d shared libraries, VmRSS %.1f MiB, exec → exit median %.2f ms (50 runs)\n", p, l, r / 1024, m / 1e6 }'
done
