#!/usr/bin/env bash
# The walk of one uncached `ready` request (issue 40's "files a ready
# request touches"): the library's source files whose code runs for it,
# with the instructions per request each one's code (inlined or not) adds.
#
# Method: `http_instructions uncached 3` (a `ready` request of three
# uncached probes through actix's service stack, no socket) is built in
# release mode with line tables for the library only, and run under
# callgrind at LOW (500) and HIGH (1000) requests. A file counts when its
# lines grow by at least half an instruction per request between the two,
# so start-up code and the workload's own set-up are left out.
#
# Usage: bench/walk.sh       env: LOW, HIGH, MODE (default "uncached 3")
# Output: one line per file, most instructions first, then the count.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
low="${LOW:-500}"
high="${HIGH:-1000}"
read -r -a mode <<<"${MODE:-uncached 3}"

command -v valgrind >/dev/null 2>&1 || {
    echo "valgrind is missing (apt-get install valgrind)" >&2
    exit 1
}
cargo build --release -p zb-health --example http_instructions \
    --config 'profile.release.package.zb-health.debug="line-tables-only"' \
    --config 'profile.release.package.zb-health-spec.debug="line-tables-only"' >&2
bin="$target_dir/release/examples/http_instructions"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for n in "$low" "$high"; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$n" "$bin" "$n" "${mode[@]}" >/dev/null 2>&1
done

python3 - "$out/$low" "$out/$high" "$((high - low))" "$root" <<'PY'
import collections, re, sys

def per_file(path):
    """Instructions per source file, inlined code charged to its own file."""
    names, cost = {}, collections.Counter()
    fl = cur = None
    after_call = False

    def resolve(value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1))

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fl="):
                fl = cur = resolve(line[3:])
            elif line.startswith(("fi=", "fe=")):
                cur = resolve(line[3:])
            elif line.startswith("fn="):
                cur = fl
            elif line.startswith(("cfi=", "cfl=")):
                resolve(line[4:])
            elif line.startswith("calls="):
                after_call = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                if after_call:  # the inclusive cost of a call, not this file's
                    after_call = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    cost[cur] += int(parts[1])
    return cost

low, high, n, root = per_file(sys.argv[1]), per_file(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rows = []
for name, total in high.items():
    if not name or not name.startswith(root + "/"):
        continue
    rel = name[len(root) + 1 :]
    if not rel.startswith(("zb-health-runtime/src/", "spec/zb-health-spec/src/")):
        continue
    per_request = (total - low.get(name, 0)) / n
    if per_request >= 0.5:
        rows.append((per_request, rel))
for per_request, rel in sorted(rows, reverse=True):
    print(f"{per_request:8.1f}  {rel}")
print(f"{len(rows)} files")
PY
