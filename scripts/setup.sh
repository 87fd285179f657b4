#!/usr/bin/env bash
# Installs what coder-eval needs on a fresh machine: the wasm32-wasip2 Rust target (the
# components build for it), the pinned agent CLIs (harnesses/package-lock.json), and
# componentize-py (builds the example Python criterion, examples/criteria/python), and the
# real pytest and pylint the pytest and pylint_score criteria run.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2
# The pinned CLIs, exactly as harnesses/package-lock.json locks them (versions and
# integrity). Not `npm ci`: it refuses any lockfile that does not list opencode-ai's
# binaries for other platforms, and the registry reachable here does not serve those;
# `npm install --no-save` installs the locked tree and leaves the lockfile as it is.
npm install --prefix harnesses --no-save --no-audit --no-fund --loglevel=error
python3 -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1
# The real tools of the `pytest` and `pylint_score` criteria (their tests run them; they
# skip, saying so, where these are missing). Tasks normally bring their own in
# sandbox.python.env_packages; these are the host's fallback on PATH.
python3 -m pip install --quiet --disable-pip-version-check pytest==8.3.4 pylint==3.3.3
# The Kubernetes schemas the emitted Indexed Job is validated against (offline: the
# package bundles the JSON schemas of every Kubernetes release; tests/all/shards.rs).
python3 -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0
# driver: docker: Docker from Debian's packages, dockerd started, the local base image
# (coder-eval-base:local) built. Exits 0 when Docker cannot run here (its tests then skip).
bash scripts/docker-setup.sh
