#!/usr/bin/env bash
# Puts `promtool` (Debian's `prometheus` package) and `amtool` (Debian's
# `prometheus-alertmanager`) under target/prometheus/usr/bin, when missing,
# for the tests that lint the /metrics scrapes (`promtool check metrics`),
# the generated alerting rules (`promtool check rules`, `promtool test
# rules`) and the example Alertmanager route (`amtool check-config`). The
# packages are unpacked, not installed: neither server is wanted or started.
# tests/run.sh calls it; run it alone to run those tests by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/prometheus
updated=""
unpack() { # package, binary
    [ -x "$dir/usr/bin/$2" ] && return
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    [ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }
    tmp=$(mktemp -d)
    # As root apt warns that its sandbox user cannot write the folder.
    (cd "$tmp" && chmod 777 . && apt-get download -qq "$1")
    mkdir -p "$dir"
    dpkg-deb -x "$tmp"/"$1"_*.deb "$dir"
    rm -rf "$tmp"
}
unpack prometheus promtool
unpack prometheus-alertmanager amtool
"$dir/usr/bin/promtool" --version 2>&1 | head -1
"$dir/usr/bin/amtool" --version 2>&1 | head -1
