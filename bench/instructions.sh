#!/usr/bin/env bash
# The ready tier's speed goals (issue 40; and P1, the `live` path's, which
# the order of the tiers' routes trades against P2+) in instructions per request, each
# ratio beside its baseline built in the same run. Instruction counts do not
# move with the machine's load, so this runs on a busy machine too.
#
# Usage: bench/instructions.sh
#   env: LOW (1000) and HIGH (2000) repetitions; each mode runs at both
#        under callgrind and (HIGH - LOW) extra requests cost the difference.
# Output: instructions per request of each mode, then the three ratios
#         against their goals. Exits 0 once it has measured (a report, not
#         a test).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
low="${LOW:-1000}"
high="${HIGH:-2000}"

command -v valgrind >/dev/null 2>&1 || {
    echo "valgrind is missing (apt-get install valgrind)" >&2
    exit 1
}
cargo build --release -p zb-health --example http_instructions >&2
bin="$target_dir/release/examples/http_instructions"

# Instructions of one run: callgrind's "Collected" total.
collected() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$@" 2>&1 >/dev/null |
        awk '/Collected/ { print $NF }'
}

# Instructions per request of MODE [PROBES]: the extra requests' cost.
per_request() {
    local a b
    a="$(collected "$low" "$@")"
    b="$(collected "$high" "$@")"
    echo $(((b - a) / (high - low)))
}

bare_join="$(per_request bare-join)"
uncached3="$(per_request uncached 3)"
live="$(per_request live)"
bare="$(per_request bare)"
cached3="$(per_request cached 3)"
cached100="$(per_request cached 100)"

printf '%-44s %10s\n' "mode (http_instructions $low|$high)" "instr/req"
printf '%-44s %10d\n' "bare-join: hand-written join! of 3 probes" "$bare_join"
printf '%-44s %10d\n' "uncached 3: zb ready, 3 uncached probes" "$uncached3"
printf '%-44s %10d\n' "live: zb /healthz" "$live"
printf '%-44s %10d\n' "bare: a static /healthz on an app of its own" "$bare"
printf '%-44s %10d\n' "cached 3: zb ready, 3 cached probes" "$cached3"
printf '%-44s %10d\n' "cached 100: zb ready, 100 cached probes" "$cached100"
echo
# ratio NAME NUMERATOR DENOMINATOR GOAL
ratio() {
    awk -v name="$1" -v n="$2" -v d="$3" -v goal="$4" 'BEGIN {
        r = n / d
        printf "%-44s %6.3f  goal >= %.2f  %s\n", name, r, goal, (r >= goal ? "met" : "NOT met")
    }'
}
ratio "P1   bare / live" "$bare" "$live" 1.00
ratio "P2   bare-join / uncached 3" "$bare_join" "$uncached3" 0.95
ratio "P2+  live / cached 3" "$live" "$cached3" 0.95
ratio "P10  cached 3 / cached 100" "$cached3" "$cached100" 0.84
