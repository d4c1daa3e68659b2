#!/usr/bin/env bash
# Three scadabridge nodes on loopback, one cluster: shows that exactly one
# node (the oldest Up member) answers /health/active 200, then stops that
# node with SIGTERM and shows the active role moving to the next-oldest.
#
#   examples/scadabridge/cluster.sh
#
# Node i serves the application on 127.0.0.1:(8080+100i), management on
# 9080+100i, grpc.health.v1 on 50051+i, gossip on udp 7101+i; every node
# has the same seeds. The three share one SQLite file in a temp dir, as a
# real deployment shares its database. Needs curl. Every child is stopped and the temp
# dir removed on exit (also on Ctrl-C or an error).
set -euo pipefail
cd "$(dirname "$0")/../.."

# SCADABRIDGE_BIN: an already built binary, instead of building one here.
bin=${SCADABRIDGE_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet -p scadabridge
    bin=target/debug/scadabridge
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/scadabridge-cluster.XXXXXX")
seeds=127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103
pids=()

cleanup() {
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    # A second signal cuts each drain short.
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port() { echo $((8080 + 100 * $1)); }

# The status code of GET url, 000 when nothing answers.
code() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" || true; }

# Polls until node $1's $2 answers $3, for at most 60 s.
wait_for() {
    local url="http://127.0.0.1:$(port "$1")$2"
    for _ in $(seq 600); do
        [ "$(code "$url")" = "$3" ] && return 0
        sleep 0.1
    done
    echo "node-$1: $2 did not answer $3 within 60 s; its log:" >&2
    cat "$dir/node-$1.log" >&2
    exit 1
}

show() {
    echo "--- $1"
    for i in 0 1 2; do
        printf 'node-%s  http://127.0.0.1:%s/health/active  %s\n' \
            "$i" "$(port "$i")" "$(code "http://127.0.0.1:$(port "$i")/health/active")"
    done
}

for i in 0 1 2; do
    PORT=$(port "$i") MANAGEMENT_PORT=$((9080 + 100 * i)) GRPC_PORT=$((50051 + i)) \
    CLUSTER_ADDR=127.0.0.1:$((7101 + i)) CLUSTER_SEEDS=$seeds NODE_ID=node-$i \
    DATA_DIR="$dir/node-$i" DATABASE_URL="sqlite://$dir/shared.db?mode=rwc" \
    DRAIN_DELAY_MS=3000 "$bin" > "$dir/node-$i.log" 2>&1 &
    pids+=($!)
    # One after another: node 0 is the oldest, node 1 the next-oldest.
    wait_for "$i" /health/ready 200
    echo "node-$i up (pid ${pids[$i]}), log $dir/node-$i.log"
done

wait_for 0 /health/active 200
wait_for 1 /health/active 503
wait_for 2 /health/active 503
show "three nodes: node-0, the oldest, is active"

echo "--- POST /api/tags/valve.7 on each node (writes pass the active-node gate only)"
for i in 0 1 2; do
    printf 'node-%s  %s\n' "$i" "$(curl -s -m 2 -X POST -H 'content-type: application/json' \
        -d '{"value": 1}' "http://127.0.0.1:$(port "$i")/api/tags/valve.7")"
done

echo "--- SIGTERM to node-0 (pid ${pids[0]})"
kill -TERM "${pids[0]}"
wait_for 0 /health/ready 503
printf 'node-0 draining: /health/ready %s, /healthz %s\n' \
    "$(code "http://127.0.0.1:$(port 0)/health/ready")" "$(code "http://127.0.0.1:$(port 0)/healthz")"
wait_for 1 /health/active 200
show "node-1, now the oldest Up member, is active"
wait "${pids[0]}" && echo "node-0 exited 0 after its drain"
show "after node-0 exited"
