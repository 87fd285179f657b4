#!/usr/bin/env bash
# Installs what coder-eval needs on a fresh machine: the wasm32-wasip2 Rust target (the
# components build for it), the pinned agent CLIs (harnesses/package-lock.json; each one's
# install time and size is in harnesses/README.md), and
# componentize-py (builds the example Python criterion, examples/criteria/python), and the
# real pytest and pylint the pytest and pylint_score criteria run, Harbor's ATIF models and
# chromium with playwright-core for the export and browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2
# The pinned CLIs, exactly as harnesses/package-lock.json locks them (versions and
# integrity). Not `npm ci`: it refuses any lockfile that does not list opencode-ai's
# binaries for other platforms, and the registry reachable here does not serve those;
# `npm install --no-save` installs the locked tree and leaves the lockfile as it is.
npm install --prefix harnesses --no-save --no-audit --no-fund --loglevel=error
# Qwen Code's vendored ripgrep ships without its exec bit (it falls back to a slower
# built-in grep and says so on stderr at every start).
chmod +x harnesses/node_modules/@qwen-code/qwen-code/vendor/ripgrep/x64-linux/rg 2>/dev/null || true
python3 -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1
# The real tools of the `pytest` and `pylint_score` criteria (their tests run them; they
# skip, saying so, where these are missing). Tasks normally bring their own in
# sandbox.python.env_packages; these are the host's fallback on PATH.
python3 -m pip install --quiet --disable-pip-version-check pytest==8.3.4 pylint==3.3.3
# Harbor's ATIF models validate what `coder-eval export --format atif` writes
# (tests/all/export_atif.rs). The `harbor` wheel installs only on Python >= 3.12, but its
# trajectory models need nothing but pydantic 2: the pinned wheel is downloaded, not
# installed, and unpacked into tests/.tools/harbor-0.26.0.
if [ ! -d tests/.tools/harbor-0.26.0/harbor/models/trajectories ]; then
  harbor_tmp=$(mktemp -d)
  python3 -m pip download --quiet --disable-pip-version-check --no-deps \
    --python-version 3.12 --only-binary=:all: -d "$harbor_tmp" harbor==0.26.0
  mkdir -p tests/.tools
  python3 -m zipfile -e "$harbor_tmp"/harbor-0.26.0-py3-none-any.whl tests/.tools/harbor-0.26.0
  rm -rf "$harbor_tmp"
fi
python3 -m pip install --quiet --disable-pip-version-check 'pydantic>=2.10,<3'
# The browser tests (tests/all/browser.rs): Debian's chromium, driven headless by
# playwright-core (pinned in tests/browser/package-lock.json; it downloads no browser).
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
npm install --prefix tests/browser --no-save --no-audit --no-fund --loglevel=error
# componentize-js (pinned in examples/criteria/javascript/package-lock.json: ~390 MB,
# ~30 s), which builds the example JavaScript criterion.
npm install --prefix examples/criteria/javascript --no-save --no-audit --no-fund --loglevel=error
# tini (Debian's package): PID 1 of each task's PID namespace, forwarding the host's
# signals to the CLI and reaping orphans (host/src/process/pidns.rs). Without it the CLI is
# PID 1 itself (deaf to SIGTERM without a handler) and coder-eval warns.
if ! command -v tini >/dev/null && command -v apt-get >/dev/null; then
    apt-get install -y --no-install-recommends tini >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends tini >/dev/null; } \
        || echo "note: tini could not be installed"
fi
# The Kubernetes schemas the emitted Indexed Job is validated against (offline: the
# package bundles the JSON schemas of every Kubernetes release; tests/all/shards.rs).
python3 -m pip install --quiet --disable-pip-version-check kubernetes-validate==1.37.0
# driver: docker: Docker from Debian's packages, dockerd started, the local base image
# (coder-eval-base:local) built. Exits 0 when Docker cannot run here (its tests then skip).
bash scripts/docker-setup.sh
