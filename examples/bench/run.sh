#!/usr/bin/env bash
# Kept for old habits: the benchmark report is run by bench/run.sh, which
# runs every mode of this crate in one run and writes bench/RESULTS.md.
set -euo pipefail
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bench/run.sh" "$@"
