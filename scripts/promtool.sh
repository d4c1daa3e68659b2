#!/usr/bin/env bash
# Puts `promtool` (from Debian's `prometheus` package) at
# target/prometheus/usr/bin/promtool, when missing, for the tests that lint
# the /metrics scrapes (`promtool check metrics`). The package is unpacked,
# not installed: the Prometheus server is neither wanted nor started.
# tests/run.sh calls it; run it alone to run those tests by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/prometheus
if [ ! -x "$dir/usr/bin/promtool" ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    tmp=$(mktemp -d)
    # As root apt warns that its sandbox user cannot write the folder.
    (cd "$tmp" && chmod 777 . && apt-get download -qq prometheus)
    mkdir -p "$dir"
    dpkg-deb -x "$tmp"/prometheus_*.deb "$dir"
    rm -rf "$tmp"
fi
"$dir/usr/bin/promtool" --version | head -1
