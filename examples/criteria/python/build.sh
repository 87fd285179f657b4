#!/usr/bin/env bash
# Builds the example Python criterion into a WebAssembly component.
#
#   examples/criteria/python/build.sh [OUTPUT.wasm]     (default: ./greeting.wasm)
#
# Needs componentize-py (`pip install componentize-py==0.25.1`); it works offline once
# installed. Takes ~10 s and gives an ~18 MB component.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
wit="$here/../../../wit"
out="${1:-$here/greeting.wasm}"
if ! command -v componentize-py >/dev/null 2>&1; then
    echo "componentize-py not found; install it with: pip install componentize-py==0.25.1" >&2
    exit 127
fi
cd "$here"
componentize-py \
    -d "$wit/events@0.1.0" -d "$wit/grader@0.1.0" \
    -w coder-eval:grader/grader@0.1.0 \
    componentize app -o "$out"
