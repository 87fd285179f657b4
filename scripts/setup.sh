#!/usr/bin/env bash
# Installs what coder-eval needs on a fresh machine: the wasm32-wasip2 Rust target (the
# components build for it), the pinned agent CLIs (harnesses/package-lock.json), and
# componentize-py (builds the example Python criterion, examples/criteria/python).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2
npm ci --prefix harnesses --no-audit --no-fund --loglevel=error
python3 -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1
