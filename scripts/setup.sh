#!/usr/bin/env bash
# Installs what coder-eval needs on a fresh machine: the wasm32-wasip2 Rust target (the
# components build for it), the pinned agent CLIs (harnesses/package-lock.json), and
# componentize-py (builds the example Python criterion, examples/criteria/python).
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2
# The pinned CLIs, exactly as harnesses/package-lock.json locks them (versions and
# integrity). Not `npm ci`: it refuses any lockfile that does not list opencode-ai's
# binaries for other platforms, and the registry reachable here does not serve those;
# `npm install --no-save` installs the locked tree and leaves the lockfile as it is.
npm install --prefix harnesses --no-save --no-audit --no-fund --loglevel=error
python3 -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1
# driver: docker: Docker from Debian's packages, dockerd started, the local base image
# (coder-eval-base:local) built. Exits 0 when Docker cannot run here (its tests then skip).
bash scripts/docker-setup.sh
