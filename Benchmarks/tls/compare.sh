#!/usr/bin/env bash
# Instructions per HTTPS request on a new connection (the TLS client context, the handshake with
# verification against the system store plus a CA file, one GET), for a baseline revision and the
# current tree in the same run, counted by callgrind: tls-bench (tls-bench.swift, next to this
# file) is run for 1 and for 21 requests and the difference is divided by 20, so process start and
# exit do not count. The peer is the HTTP tests' TLS peer (Tests/HTTPTests/Peers/http_peer.py)
# with a throw-away CA made with the openssl CLI.
#
# Each tree's tls-bench is a scratch package that depends on that tree by path (the HTTP and
# SocketIO products), built the shipped way (-c release -Xswiftc -static-stdlib) and stripped
# (valgrind cannot read the toolchain's DWARF). The baseline tree is `git archive BASE_REV`.
#
# Usage: bash Benchmarks/tls/compare.sh BASE_REV
# Env:   TLS_BENCH_SCRATCH=DIR  where the trees, packages and certificates go (default /tmp/tls-bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
[ $# -eq 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 64; }
BASE_SHA=$(git rev-parse --verify "$1^{commit}")
SCRATCH=${TLS_BENCH_SCRATCH:-/tmp/tls-bench}
BASE_TREE=$SCRATCH/tree-$(git rev-parse --short "$BASE_SHA")
mkdir -p "$SCRATCH"
if [ ! -d "$BASE_TREE" ]; then
    mkdir -p "$BASE_TREE.partial"
    git archive "$BASE_SHA" | tar -x -C "$BASE_TREE.partial"
    mv "$BASE_TREE.partial" "$BASE_TREE"
fi

# Builds tls-bench against the tree $2 in the package directory $1; prints the stripped binary's path.
build_bench() {
    local package=$1 tree=$2 log
    mkdir -p "$package/Sources/tls-bench"
    cp "$ROOT/Benchmarks/tls/tls-bench.swift" "$package/Sources/tls-bench/main.swift"
    cat >"$package/Package.swift" <<PACKAGE
// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "tls-bench",
    dependencies: [.package(name: "interactived", path: "$tree")],
    targets: [.executableTarget(name: "tls-bench", dependencies: [
        .product(name: "HTTP", package: "interactived"), .product(name: "SocketIO", package: "interactived"),
    ])],
    swiftLanguageModes: [.v6]
)
PACKAGE
    log=$(mktemp /tmp/tls-bench-build-XXXXXX.log)
    if ! (cd "$package" && nice -n 10 swift build -c release -Xswiftc -static-stdlib) >"$log" 2>&1; then
        cat "$log" >&2
        echo "compare.sh: the build of tls-bench against $tree failed" >&2
        exit 1
    fi
    rm -f "$log"
    strip -o "$package/tls-bench" "$(cd "$package" && swift build -c release -Xswiftc -static-stdlib --show-bin-path)/tls-bench"
    echo "$package/tls-bench"
}
BASE_BIN=$(build_bench "$SCRATCH/package-base" "$BASE_TREE")
CURRENT_BIN=$(build_bench "$SCRATCH/package-current" "$ROOT")

CERTS=$SCRATCH/certs
if [ ! -f "$CERTS/server.pem" ]; then
    mkdir -p "$CERTS"
    EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    (cd "$CERTS" &&
        openssl req -x509 "${EC[@]}" -keyout ca.key -out ca.pem -days 3650 -subj "/CN=tls-bench CA" &&
        openssl req "${EC[@]}" -keyout server.key -out server.csr -subj "/CN=localhost" &&
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' >ext.cnf &&
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 3650 -extfile ext.cnf
    ) >/dev/null 2>&1
fi

PEER_OUT=$(mktemp /tmp/tls-bench-peer-XXXXXX)
python3 "$ROOT/Tests/HTTPTests/Peers/http_peer.py" --cert "$CERTS/server.pem" --key "$CERTS/server.key" >"$PEER_OUT" 2>&1 &
PEER=$!
trap 'kill $PEER 2>/dev/null; rm -f "$PEER_OUT"' EXIT
for _ in $(seq 50); do grep -q READY "$PEER_OUT" && break; sleep 0.1; done
PORT=$(awk '/READY/ { print $2 }' "$PEER_OUT")
[ -n "$PORT" ] || { cat "$PEER_OUT" >&2; echo "compare.sh: the TLS peer did not start" >&2; exit 1; }

# Instructions (every thread, the libraries included) of `$1 PORT CA N`.
instructions() {
    local out
    out=$(mktemp /tmp/tls-bench-callgrind-XXXXXX)
    valgrind --tool=callgrind --callgrind-out-file="$out" "$1" "$PORT" "$CERTS/ca.pem" "$2" 2>&1 \
        | awk '/Collected/ { print $4 }'
    rm -f "$out"
}

echo "instructions per HTTPS request on a new connection (callgrind; (21 requests - 1 request) / 20)"
printf '%-10s %15s %15s %15s\n' build "1 request" "21 requests" "per request"
for build in base current; do
    bin=$BASE_BIN
    [ "$build" = current ] && bin=$CURRENT_BIN
    one=$(instructions "$bin" 1)
    many=$(instructions "$bin" 21)
    [ -n "$one" ] && [ -n "$many" ] || { echo "compare.sh: tls-bench failed under valgrind ($build)" >&2; exit 1; }
    printf '%-10s %15d %15d %15d\n' "$build" "$one" "$many" $(((many - one) / 20))
done
