#!/usr/bin/env bash
# The main job: install, build, and run hello_date on every installed harness (the built-in
# ones and the out-of-tree ones of examples/harness) against the
# scripted model (offline: inside a loopback-only network namespace when the machine
# allows one), printing one summary line per harness. Extra arguments go to `run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --bin coder-eval
# The out-of-tree harnesses (examples/harness/*), built after the host as a user would and
# loaded from their folder: `--harness all` takes them in too.
components="${CARGO_TARGET_DIR:-target}/harness-components"
examples/harness/build.sh droid "$components" >/dev/null
isolate=()
if unshare -n true 2>/dev/null; then isolate=(--isolate-network); fi
exec "${CARGO_TARGET_DIR:-target}/debug/coder-eval" run tasks/hello_date/task.yaml --harness all \
    --components "$components" "${isolate[@]}" "$@"
