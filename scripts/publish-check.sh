#!/usr/bin/env bash
# The library crates as crates.io would get them: `cargo publish --dry-run`
# packages zb-health-spec, zb-health-macros and zb-health in dependency
# order (the later ones resolve the earlier ones from a local overlay, as
# none is on crates.io yet) and builds each from its .crate alone. A file
# read from outside its own package (a schema, a template, a README) fails
# here, not after the upload.
#
# `--allow-dirty`: it checks the files as they are, committed or not, so it
# also runs before a commit. No debuginfo: the verify build only has to
# compile, and full debuginfo (the packaged crates carry no `[profile]`)
# makes a cold run slower. Measured on the 2-core CI machine, shared: cold
# 118 s (207 s with debuginfo), warm 14 s.
#
# The verify build has a target dir of its own, and the three crates'
# artifacts are removed from it first: cargo takes a crate from a
# registry (here the local overlay) as immutable, so a warm build would
# reuse a `zb-health-spec 0.1.0` packaged before a change and verify the
# later crates against it. Their dependencies stay warm.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir=target/publish-check
# cargo unpacks the overlay's packages under $CARGO_HOME/registry/src/-<hash>/
# (the `-` names a local registry, never crates.io's) and reuses an unpacked
# package of the same version: remove earlier ones, or a second run on one
# machine verifies the later crates against an old zb-health-spec.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf "$cargo_home"/registry/src/-*/zb-health-spec-* "$cargo_home"/registry/src/-*/zb-health-macros-* \
    "$cargo_home"/registry/src/-*/zb-health-0.*
rm -rf "$target_dir"/debug/.fingerprint/zb-health-* "$target_dir"/debug/build/zb-health-* \
    "$target_dir"/debug/deps/*zb_health* "$target_dir"/package
start=$SECONDS
CARGO_TARGET_DIR="$target_dir" CARGO_PROFILE_DEV_DEBUG=false cargo publish --dry-run --allow-dirty --quiet \
    -p zb-health-spec -p zb-health-macros -p zb-health
echo "publish-check: dry run of zb-health-spec, zb-health-macros, zb-health passed in $((SECONDS - start)) s"
