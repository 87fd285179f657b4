#!/usr/bin/env bash
# Builds an out-of-tree harness component (a folder beside this script with its own
# Cargo.toml) for wasm32-wasip2 and puts it where `--components DIR` finds it:
#
#   examples/harness/build.sh NAME [OUT_DIR]     (default OUT_DIR: target/harness-components)
#
# gives OUT_DIR/NAME.wasm (the harness name is the file's stem). The build has its own
# target folder ($CARGO_TARGET_DIR/harness-NAME, else examples/harness/NAME/target), never
# host/build.rs's. Needs `rustup target add wasm32-wasip2` (scripts/setup.sh does it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name="${1:?usage: build.sh NAME [OUT_DIR]}"
src="$here/$name"
[ -f "$src/Cargo.toml" ] || { echo "no $src/Cargo.toml" >&2; exit 2; }
out="${2:-$here/../../target/harness-components}"
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
    target="$CARGO_TARGET_DIR/harness-$name"
else
    target="$src/target"
fi
# The package's lib name: its `name` with `-` as `_`.
lib="$(sed -n 's/^name = "\(.*\)"/\1/p' "$src/Cargo.toml" | head -1 | tr - _)"
# A clean cargo environment: nothing of an outer build (a test's cargo) leaks in.
env -u RUSTFLAGS -u CARGO_BUILD_TARGET -u CARGO_ENCODED_RUSTFLAGS -u RUSTC_WRAPPER \
    cargo build --release --target wasm32-wasip2 \
    --manifest-path "$src/Cargo.toml" --target-dir "$target"
mkdir -p "$out"
cp "$target/wasm32-wasip2/release/$lib.wasm" "$out/$name.wasm"
echo "$out/$name.wasm"
