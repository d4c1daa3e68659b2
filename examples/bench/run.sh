#!/usr/bin/env bash
# Runs the zb-health vs bare actix-web benchmark and keeps its report.
#
# Usage: examples/bench/run.sh   (env: ROUNDS, DURATION, CONNECTIONS, THREADS, WARMUP)
# Output: the report on the terminal and in target/bench-report.txt.
set -euo pipefail

# Paths are taken from the workspace root so the script runs from anywhere.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

# wrk is a Debian package; it is installed on demand because a fresh
# machine does not keep what an earlier session installed by hand.
if ! command -v wrk >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq
        apt-get install -y wrk
    else
        sudo apt-get update -qq
        sudo apt-get install -y wrk
    fi
fi

# Release build: a debug build would measure the optimiser's absence.
cargo build --release -p zb-health-bench

target_dir="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target_dir"
# stderr carries the per-run progress; both go to the report so a partial
# run still shows how far it got.
"$target_dir/release/zb-health-bench" 2>&1 | tee "$target_dir/bench-report.txt"
# The watchdog ratio (issue 8), appended to the same report; the
# execution-policy table is already at the end of the run above.
BENCH=watchdog "$target_dir/release/zb-health-bench" 2>&1 | tee -a "$target_dir/bench-report.txt"
# The management port's latency under a saturated application (issue 9).
BENCH=management "$target_dir/release/zb-health-bench" 2>&1 | tee -a "$target_dir/bench-report.txt"
# The disclosure ratios (issue 9): /health/ready at names and status ÷ full.
BENCH=disclosure "$target_dir/release/zb-health-bench" 2>&1 | tee -a "$target_dir/bench-report.txt"
# Probe executions with 100 gRPC Watch streams and 64 HTTP clients vs HTTP
# alone (issue 9, AT-7), appended too.
BENCH=grpc "$target_dir/release/zb-health-bench" 2>&1 | tee -a "$target_dir/bench-report.txt"
