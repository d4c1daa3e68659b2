#!/usr/bin/env bash
# Three OtOpcUa nodes on loopback, one real chitchat cluster:
#
#   node 0  CLUSTER_ROLES=admin,driver  http://127.0.0.1:8080  (oldest)
#   node 1  CLUSTER_ROLES=driver        http://127.0.0.1:8090
#   node 2  CLUSTER_ROLES=historian     http://127.0.0.1:8100
#
# The active node is the oldest Up member holding `admin`, else `driver`
# (health.yaml: scope: role, roles: [admin, driver]). The script prints
# every node's /health/active, stops node 0 with SIGTERM (its drain
# announces Leaving) and prints them again: node 1, the next `driver`, is
# active. Node 2 holds neither role and answers 503 throughout.
#
# Needs curl. Each node keeps its SQLite file in a temp dir removed at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

# OTOPCUA_BIN: an already built binary, instead of building one here.
bin=${OTOPCUA_BIN:-}
if [ -z "$bin" ]; then
    cargo build -q -p otopcua
    bin=target/debug/otopcua
fi
work=$(mktemp -d)
roles=(admin,driver driver historian)
seeds=127.0.0.1:7201,127.0.0.1:7202,127.0.0.1:7203
pids=()

stop_all() {
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true   # the second signal ends the drain
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

port() { echo $((8080 + 10 * $1)); }

# Polls `cmd` every 0.2 s until it succeeds, for at most 30 s.
until_true() {
    local what=$1; shift
    for _ in $(seq 150); do
        if "$@"; then return 0; fi
        sleep 0.2
    done
    echo "timed out waiting for $what" >&2
    exit 1
}

answers() { curl -s -o /dev/null "http://127.0.0.1:$(port "$1")/healthz"; }
active_is() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(port "$1")/health/active")" = "$2" ]; }

for i in 0 1 2; do
    PORT=$(port $i) MANAGEMENT_PORT=$(($(port $i) + 1)) GRPC_PORT=$((50051 + i)) \
    CLUSTER_ADDR=127.0.0.1:$((7201 + i)) CLUSTER_SEEDS=$seeds CLUSTER_ROLES=${roles[$i]} \
    NODE_ID=node-$i DATA_DIR="$work/node-$i" DRAIN_DELAY_MS=2000 \
        "$bin" > "$work/node-$i.log" 2>&1 &
    pids+=($!)
    until_true "node $i to listen" answers $i   # started in order: node 0 is the oldest
done

show() {
    for i in "$@"; do
        local body code
        body=$(curl -s -w '\n%{http_code}' "http://127.0.0.1:$(port "$i")/health/active")
        code=${body##*$'\n'}
        body=${body%$'\n'*}
        local node role description
        node=$(sed -n 's/.*"activeNode":"\([^"]*\)".*/\1/p' <<< "$body")
        role=$(sed -n 's/.*"activeRole":"\([^"]*\)".*/\1/p' <<< "$body")
        description=$(sed -n 's/.*"description":"\([^"]*\)".*/\1/p' <<< "$body")
        printf '  node %s (%-12s) /health/active %s  role=%-7s active=%-16s %s\n' \
            "$i" "${roles[$i]}" "$code" "${role:--}" "${node:--}" "$description"
    done
}

until_true "node 0 active" active_is 0 200
echo "three nodes up (node 0 is udp 127.0.0.1:7201):"
show 0 1 2

echo "stopping node 0 (SIGTERM: it drains and gossips Leaving) ..."
kill -TERM "${pids[0]}"
until_true "node 1 to take over" active_is 1 200
echo "after the oldest admin left:"
show 1 2
