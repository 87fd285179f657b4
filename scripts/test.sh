#!/usr/bin/env bash
# The whole test suite (what CI runs): the host and scripted-model tests (golden replay,
# sandbox, live runs of the real CLIs against the scripted model) and the components'
# native unit tests. Needs scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo test --manifest-path components/Cargo.toml --workspace
