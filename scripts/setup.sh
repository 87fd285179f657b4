#!/usr/bin/env bash
# Installs what coder-eval needs on a fresh machine: the wasm32-wasip2 Rust target (the
# components build for it) and the pinned agent CLIs (harnesses/package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2
npm ci --prefix harnesses --no-audit --no-fund --loglevel=error
