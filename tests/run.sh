#!/usr/bin/env bash
# The project's one test command (the README's, and what .ci/run calls).
# It prepares what the tests need on a fresh machine, then runs every test
# of the workspace: unit, integration, HTTP over real sockets, doc tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# The chitchat and tonic suites start their real peers in-process on
# loopback; the PostgreSQL suite starts its own throwaway server from the
# Debian binaries installed below, so a fresh clone needs nothing by hand.

# PostgreSQL server binaries (Debian's): tests/tests/database.rs starts its
# own throwaway server from /usr/lib/postgresql/*/bin on a loopback port, so
# only the packages are needed, not the packaged cluster (not created).
if ! compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' > /dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo mkdir -p /etc/postgresql-common/createcluster.d
    echo 'create_main_cluster = false' | $sudo tee /etc/postgresql-common/createcluster.d/zb-health.conf > /dev/null
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql > /dev/null
fi

# redis-server (Debian's) for tests/tests/redis.rs, which starts its own
# server on a free loopback port (never the packaged service), kills it
# and pauses it with SIGSTOP; only the binary is needed.
if ! command -v redis-server > /dev/null && [ -z "${REDIS_SERVER:-}" ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server > /dev/null
fi

# Chromium (Debian's) for the browser tests of the health page
# (zb-health-cli/tests/{page,dashboard}.rs and
# examples/scadabridge/tests/{health_page,dashboard}.rs, through
# zb_health_testkit::browser): headless, on 127.0.0.1 pages only.
if ! command -v chromium > /dev/null && ! command -v chromium-headless-shell > /dev/null && [ -z "${CHROMIUM:-}" ]; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium > /dev/null
fi

# The fault harness (zb_health_testkit::fault, issue 27): network
# namespaces (iproute2's `ip netns`) and packet filters (`iptables`, nft
# backend), inside which examples/scadabridge/tests/faults.rs runs real
# nodes. Needs root, as CI is.
if ! command -v iptables > /dev/null || ! command -v ip > /dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iptables iproute2 > /dev/null
fi

# The openssl CLI (Debian's) makes the X.509 certificates of
# tests/tests/certificate.rs: valid, near expiry, expired, not yet valid and
# a chain, each a real PEM file.
if ! command -v openssl > /dev/null; then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl > /dev/null
fi

# kubectl (Debian's kubernetes-client) and kubernetes-validate (PyPI, in
# target/venv) for zb-health-cli/tests/kubectl.rs: the printed patch is
# applied with kubectl and validated against the Kubernetes schemas.
./scripts/k8s-tools.sh
export ZB_HEALTH_K8S_VALIDATE="$PWD/target/venv/bin/kubernetes-validate"

# promtool and amtool (Debian's `prometheus` and `prometheus-alertmanager`
# packages, unpacked under target/) for the tests that lint the /metrics
# scrapes, the generated alerting rules and the example Alertmanager route.
./scripts/prometheus-tools.sh
export ZB_HEALTH_PROMTOOL="$PWD/target/prometheus/usr/bin/promtool"

# Style first: it is the cheapest failure. Then the library's size, which
# may not grow past its budget (issue 40's measure, scripts/size.py).
cargo fmt --all --check
python3 scripts/size.py --budget
cargo clippy --workspace --all-targets --all-features -- -D warnings

# Feature guards: the runtime with no default features and with each
# feature alone, so a `#[cfg(feature = …)]` that leans on another feature
# cannot hide behind `--all-features`.
# `database` alone is the probe with no driver; `sqlite` and `postgres`
# each bring one.
for features in "" macros cluster chitchat database sqlite postgres grpc http-probe disk redis certificate certificate-handshake prometheus otel test-util; do
    echo "cargo check: zb-health, features [${features}]"
    cargo check --quiet -p zb-health --no-default-features ${features:+--features "$features"}
done

# The docs as docs.rs builds them (every feature), warnings as errors:
# a broken intra-doc link fails here. Without `--cfg docsrs`, which
# turns on the nightly-only `doc_cfg` badges.
RUSTDOCFLAGS="-D warnings" cargo doc --quiet --workspace --all-features --no-deps

# The library crates package and build on their own, as crates.io gets them.
./scripts/publish-check.sh

# The criterion micro-benchmarks (tier evaluation, body writer) are built,
# never run: a timing is no test on a shared machine (issue 17).
cargo bench --no-run --quiet -p zb-health

cargo test --workspace --all-features "$@"
