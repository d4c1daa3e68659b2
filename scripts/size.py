#!/usr/bin/env python3
"""Library size: lines of code in the runtime, macros, spec and CLI crates,
without comments, blank lines and tests (issue 40's measure).

Not counted:
- blank lines and comment-only lines (`//`, `///`, `//!`, `/* … */`);
- test code: files named `tests.rs` or under a `tests/` folder, and every
  item under `#[cfg(test)]` or `#[cfg(all(test, …))]`;
- the modules of new probe kinds and exporters listed in `NOT_COUNTED`
  (issue 41: each lives in its own module, outside the core's budget).

Usage: `scripts/size.py` prints one line per crate and the total;
`scripts/size.py --files` also lists each file's count, largest first;
`scripts/size.py --budget` fails (exit 1) when the total is over `BUDGET`,
as `tests/run.sh` runs it.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = [
    ("runtime", "zb-health-runtime/src"),
    ("macros", "zb-health-macros/src"),
    ("spec", "spec/zb-health-spec/src"),
    ("cli", "zb-health-cli/src"),
]
# Paths (relative to the repository) of battery modules: counted apart.
NOT_COUNTED_PREFIXES = (
    "zb-health-runtime/src/probes/",
    "zb-health-runtime/src/observe/otel",
    "zb-health-runtime/src/observe/prometheus",
    # Issue 41 §8: the opt-in exit of a stalled watchdog.
    "zb-health-runtime/src/lifecycle/stall_exit.rs",
    # The spec crate's parts of the batteries: the disk probe's levels, the
    # HTTP probe's URL and status range, the Redis probe's URL and the
    # certificate probe's warning window, and their manifest readers.
    "spec/zb-health-spec/src/disk.rs",
    "spec/zb-health-spec/src/manifest/read/disk.rs",
    "spec/zb-health-spec/src/upstream.rs",
    "spec/zb-health-spec/src/redis.rs",
    "spec/zb-health-spec/src/manifest/read/redis.rs",
    "spec/zb-health-spec/src/certificate.rs",
    "spec/zb-health-spec/src/manifest/read/certificate.rs",
)
GOAL = 18_500
# What the core may not grow past, checked in CI: the size it was cut to,
# not the goal above, which it has not reached (see issue 40's notes).
# Lower it after a cut; raise it only with a reason in the commit.
BUDGET = 22_000


def is_test_file(rel):
    parts = rel.split("/")
    return parts[-1] == "tests.rs" or "tests" in parts[:-1]


def strip_comments(text):
    """Yields the code of each line with comments removed (strings kept)."""
    out = []
    depth = 0  # nesting of /* */ comments
    for line in text.splitlines():
        code = []
        i = 0
        in_str = False
        while i < len(line):
            two = line[i : i + 2]
            if depth:
                if two == "/*":
                    depth += 1
                    i += 2
                elif two == "*/":
                    depth -= 1
                    i += 2
                else:
                    i += 1
                continue
            c = line[i]
            if in_str:
                code.append(c)
                if c == "\\":
                    code.append(line[i + 1 : i + 2])
                    i += 2
                    continue
                if c == '"':
                    in_str = False
                i += 1
                continue
            if two == "//":
                break
            if two == "/*":
                depth += 1
                i += 2
                continue
            if c == '"':
                in_str = True
            code.append(c)
            i += 1
        out.append("".join(code))
    return out


CFG_TEST = re.compile(r"^\s*#\[cfg\((test|all\(test\b.*)\)\]")


def count(text):
    lines = strip_comments(text)
    n = 0
    skip_depth = None  # brace depth at which a #[cfg(test)] item started
    pending = False
    depth = 0
    for code in lines:
        stripped = code.strip()
        if skip_depth is None and CFG_TEST.match(code):
            pending = True
            continue
        opens = code.count("{") - code.count("}")
        if pending:
            # The item after #[cfg(test)]: a `mod x;` line or a braced block.
            if stripped.endswith(";") and "{" not in code:
                pending = False
            elif "{" in code:
                pending = False
                skip_depth = depth
            depth += opens
            if skip_depth is not None and depth <= skip_depth:
                skip_depth = None
            continue
        depth += opens
        if skip_depth is not None:
            if depth <= skip_depth:
                skip_depth = None
            continue
        if stripped:
            n += 1
    return n


def main():
    show_files = "--files" in sys.argv
    total = 0
    per_file = []
    for name, src in CRATES:
        crate_total = 0
        for dirpath, _, files in os.walk(os.path.join(ROOT, src)):
            for f in files:
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)
                if is_test_file(rel) or rel.startswith(NOT_COUNTED_PREFIXES):
                    continue
                with open(path, encoding="utf-8") as fh:
                    c = count(fh.read())
                crate_total += c
                per_file.append((c, rel))
        print(f"{name:8} {crate_total:6}")
        total += crate_total
    print(f"{'total':8} {total:6}  (goal: at most {GOAL}; budget {BUDGET})")
    if show_files:
        for c, rel in sorted(per_file, reverse=True):
            print(f"{c:6}  {rel}")
    if "--budget" in sys.argv and total > BUDGET:
        print(f"library code is {total} lines, over its budget of {BUDGET}: "
              "cut it, or raise BUDGET in scripts/size.py with a reason",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
