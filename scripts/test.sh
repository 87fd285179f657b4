#!/usr/bin/env bash
# The whole test suite (what CI runs): the host and scripted-model tests (golden replay,
# sandbox, live runs of the real CLIs against the scripted model) and the components'
# native unit tests. Needs scripts/setup.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
# The benches compile (they are no tests, so `cargo test` skips them): in the dev profile,
# which reuses the build above (their own profile, release, is a second ~10 min wasmtime
# build); run them with `cargo bench` (each prints PASS, or FAIL and exits 1).
cargo bench --workspace --no-run --profile dev
cargo test --manifest-path components/Cargo.toml --workspace
# The out-of-tree harness example's own unit tests (its own workspace).
cargo test --manifest-path examples/harness/droid/Cargo.toml
