#!/usr/bin/env bash
# The project's one test command (the README's, and what .ci/run calls).
# It prepares what the tests need on a fresh machine, then runs every test
# of the workspace: unit, integration, HTTP over real sockets, doc tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# Later suites (PostgreSQL, chitchat, tonic) start their services here, so a
# fresh clone needs nothing installed by hand.

cargo test --workspace --all-features "$@"
