#!/usr/bin/env bash
# Regenerates the screenshots of the health page that the README shows:
# starts scadabridge on loopback, waits until its management port serves
# /health/ui and its probes have a few runs of history, takes
# docs/health-page.png (1200x900) and docs/health-page-320.png (320 wide)
# in headless Chromium, keeps the /health/history document the page read
# (docs/health-history.json, for the README beside the picture), and stops
# the process.
#
#   scripts/screenshot.sh
#
# Ports (override with the same variables scadabridge reads): application
# 18080, management 18081, grpc.health.v1 50151, gossip udp 17101; a fresh
# DATA_DIR in a temp dir. Needs curl and Debian's chromium (tests/run.sh
# installs it), or CHROMIUM=/path/to/chromium. The child is stopped and the
# temp dir removed on exit (also on Ctrl-C or an error).
set -euo pipefail
cd "$(dirname "$0")/.."

export PORT=${PORT:-18080}
export MANAGEMENT_PORT=${MANAGEMENT_PORT:-18081}
export GRPC_PORT=${GRPC_PORT:-50151}
export CLUSTER_ADDR=${CLUSTER_ADDR:-127.0.0.1:17101}
# A short drain: the script's SIGTERM should not wait out a grace period.
export DRAIN_DELAY_MS=${DRAIN_DELAY_MS:-0}

chromium=${CHROMIUM:-}
if [ -z "$chromium" ]; then
    chromium=$(command -v chromium || command -v chromium-headless-shell || true)
fi
if [ -z "$chromium" ]; then
    echo "no Chromium: install Debian's chromium (tests/run.sh does) or set CHROMIUM" >&2
    exit 2
fi

# SCADABRIDGE_BIN: an already built binary, instead of building one here.
bin=${SCADABRIDGE_BIN:-}
if [ -z "$bin" ]; then
    cargo build --quiet -p scadabridge
    bin=target/debug/scadabridge
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/zb-health-screenshot.XXXXXX")
export DATA_DIR=${DATA_DIR:-$dir/data}
pid=""

cleanup() {
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        # A second signal cuts the drain short.
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bin" > "$dir/scadabridge.log" 2>&1 &
pid=$!

base="http://127.0.0.1:$MANAGEMENT_PORT/health"

# The status code of GET url, 000 when nothing answers.
code() { curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" || true; }

# Polls until $1 answers 200, for at most 60 s.
for _ in $(seq 600); do
    [ "$(code "$base/ui")" = 200 ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "scadabridge exited; its output:" >&2
        cat "$dir/scadabridge.log" >&2
        exit 1
    fi
    sleep 0.1
done
if [ "$(code "$base/ui")" != 200 ]; then
    echo "$base/ui did not answer 200 within 60 s (is the history enabled in examples/scadabridge/health.yaml?); output:" >&2
    cat "$dir/scadabridge.log" >&2
    exit 1
fi

# Some history for the sparklines: until a probe has ten runs (or 60 s).
for _ in $(seq 600); do
    curl -s -m 2 "$base/history" | grep -Eq '"runs": *[1-9][0-9]' && break
    sleep 0.1
done

# The tiers show the last answer each gave, never a new evaluation: ask
# each once, as a kubelet would have, so none shows "not answered yet".
for path in /health/ready /health/active /healthz; do
    curl -s -o /dev/null -m 2 "http://127.0.0.1:$MANAGEMENT_PORT$path" || true
done

mkdir -p docs
shot() {
    local out=$1 size=$2
    rm -f "$out"
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-quic --no-first-run --no-default-browser-check \
        --user-data-dir="$dir/profile-$size" --virtual-time-budget=5000 \
        --hide-scrollbars --window-size="$size" --screenshot="$out" "$base/ui" \
        > "$dir/chromium.log" 2>&1 || { cat "$dir/chromium.log" >&2; exit 1; }
    [ -s "$out" ] || { echo "Chromium wrote no $out" >&2; cat "$dir/chromium.log" >&2; exit 1; }
    echo "$out"
}
shot docs/health-page.png 1200,900
shot docs/health-page-320.png 320,1400
# The JSON beside the picture: the document of the same moment.
curl -s -m 2 "$base/history" > docs/health-history.json
[ -s docs/health-history.json ] || { echo "no history document" >&2; exit 1; }
echo docs/health-history.json
