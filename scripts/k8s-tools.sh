#!/usr/bin/env bash
# Installs, when missing, what zb-health-cli/tests/kubectl.rs needs:
# kubectl (Debian's `kubernetes-client` package) and the schema validator
# `kubernetes-validate` (PyPI) in a venv under target/venv. tests/run.sh
# calls it; run it alone to run that test by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=""
apt_install() {
    [ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" > /dev/null
}

if ! command -v kubectl > /dev/null; then
    apt_install kubernetes-client
fi

venv=target/venv
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    # Debian's python3 leaves `venv` (ensurepip) to python3-venv.
    if ! command -v python3 > /dev/null || ! python3 -c 'import ensurepip' 2> /dev/null; then
        apt_install python3 python3-venv
    fi
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'kubernetes-validate==1.37.0'
fi
