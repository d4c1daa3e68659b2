#!/usr/bin/env bash
# The benchmark report: every benchmark of zb-health in one run on this
# machine, one table of ratios, and bench/RESULTS.md with its PNG plots.
#
# Usage: bench/run.sh
#   env: ROUNDS (5), DURATION (5s), CONNECTIONS (32), WARMUP (1s) for the
#        per-mode comparisons; SWEEP_ROUNDS (2), SWEEP_DURATION (3s),
#        SWEEP_CONNECTIONS (1,4,16,64,256), SWEEP_PROBES (1,10,100,1000)
#        for the sweeps; FONT (a .ttf for the plots); PEERS=0 skips the
#        peers (Node, Python); BENCH_OUT (bench/) where RESULTS.md and the
#        PNGs go. Defaults take about 10 minutes.
# Output: the report on the terminal and in target/bench-report.txt;
#         bench/RESULTS.md and bench/*.png rewritten.
set -euo pipefail

# Paths are taken from the workspace root so the script runs from anywhere.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

# What a fresh Debian machine lacks is installed here, not by hand: wrk
# loads the servers, DejaVu Sans labels the plots, Node and Python's venv
# run the peers.
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
# BENCH=fleet renders the dashboard's page in headless Chromium.
command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM:-}" ] || missing+=(chromium)
if [ -z "${FONT:-}" ] && [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    missing+=(fonts-dejavu-core)
fi
if [ "${PEERS:-1}" != 0 ]; then
    command -v node >/dev/null 2>&1 || missing+=(nodejs)
    command -v npm >/dev/null 2>&1 || missing+=(npm)
    python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
fi
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${missing[@]}"
fi

# The peers of other ecosystems, at the versions bench/peers/package.json
# and requirements.txt pin, installed into a git-ignored directory beside
# the build.
peers_dir="$target_dir/bench-peers"
if [ "${PEERS:-1}" != 0 ]; then
    mkdir -p "$peers_dir"
    cp bench/peers/package.json bench/peers/*.cjs bench/peers/*.mjs \
        bench/peers/*.py bench/peers/requirements.txt "$peers_dir/"
    if ! (cd "$peers_dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null); then
        echo "warning: npm install failed; the report runs without the Node peers" >&2
    fi
    # The Python peer in a virtual environment of its own, from PyPI.
    if { [ -x "$peers_dir/py/bin/python" ] || python3 -m venv "$peers_dir/py"; } &&
        "$peers_dir/py/bin/pip" install -q --disable-pip-version-check \
            -r "$peers_dir/requirements.txt"; then
        :
    else
        echo "warning: the Python peer could not be installed; the report runs without it" >&2
        rm -rf "$peers_dir/py"
    fi
else
    # An empty directory: the report finds no peer and says so.
    peers_dir="$target_dir/bench-peers-none"
    mkdir -p "$peers_dir"
fi

# Release build: a debug build would measure the optimiser's absence.
# BENCH=fleet runs the dashboard, the CLI's release binary.
cargo build --release -p zb-health-bench -p zb-health-cli

report="$target_dir/bench-report.txt"
out="${BENCH_OUT:-$root/bench}"
# stderr carries the per-run progress; both go to the report so a partial
# run still shows how far it got.
BENCH=all PEERS_DIR="$peers_dir" BENCH_OUT="$out" \
    "$target_dir/release/zb-health-bench" 2>&1 | tee "$report"

# The full output closes RESULTS.md: the per-round numbers behind every
# ratio, for a reader who doubts one.
{
    printf '\n## Full output of the run\n\n```text\n'
    cat "$report"
    printf '```\n'
} >>"$out/RESULTS.md"
echo "$out/RESULTS.md and its PNGs written; the log is in $report"
