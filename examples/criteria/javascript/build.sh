#!/usr/bin/env bash
# Builds the example JavaScript criterion into a WebAssembly component.
#
#   examples/criteria/javascript/build.sh [OUTPUT.wasm]     (default: ./greeting.wasm)
#
# Needs componentize-js, pinned in package.json: `npm ci` in this folder installs it
# (scripts/setup.sh does). It works offline once installed. Takes ~40 s and gives a
# ~12 MB component (the SpiderMonkey engine, StarlingMonkey, with the script in it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/greeting.wasm}"
bin="$here/node_modules/.bin/componentize-js"
if [ ! -x "$bin" ]; then
    echo "componentize-js not found; install it with: (cd $here && npm ci)" >&2
    exit 127
fi
# The grader and events WIT come from the repository's released contracts, so the
# copies under wit/deps cannot drift from them.
for pkg in grader events; do
    if ! cmp -s "$here/wit/deps/$pkg/$pkg.wit" "$here/../../../wit/$pkg@0.1.0/$pkg.wit"; then
        echo "wit/deps/$pkg/$pkg.wit differs from wit/$pkg@0.1.0/$pkg.wit" >&2
        exit 1
    fi
done
# HTTP and the fetch event are left out: a grader has no network, and the host links no
# wasi:http, so a component that imports it cannot start.
"$bin" "$here/src/app.js" --wit "$here/wit" --world-name grader-js \
    --disable http fetch-event -o "$out"
