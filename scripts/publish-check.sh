#!/usr/bin/env bash
# The library crates as crates.io would get them: `cargo publish --dry-run`
# packages zb-health-spec, zb-health-macros and zb-health in dependency
# order (the later ones resolve the earlier ones from a local overlay, as
# none is on crates.io yet) and builds each from its .crate alone. A file
# read from outside its own package (a schema, a template, a README) fails
# here, not after the upload.
#
# `--allow-dirty`: it checks the files as they are, committed or not, so it
# also runs before a commit. The verify build shares the workspace target
# dir (cargo's default), so a warm run recompiles only the three crates.
# No debuginfo: the verify build only has to compile, and full debuginfo
# (the packaged crates carry no `[profile]`) makes a cold run slower.
# Measured on the 2-core CI machine, shared: cold 118 s (207 s with
# debuginfo), warm 14 s.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
CARGO_PROFILE_DEV_DEBUG=false cargo publish --dry-run --allow-dirty --quiet \
    -p zb-health-spec -p zb-health-macros -p zb-health
echo "publish-check: dry run of zb-health-spec, zb-health-macros, zb-health passed in $((SECONDS - start)) s"
