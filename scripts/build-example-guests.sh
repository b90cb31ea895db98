#!/usr/bin/env bash
# Builds the Rust example guest components from source (guest-examples/) and copies each
# one an example plugin names as hooks/<guest>.wasm into that plugin, so that `hookbox dispatch`
# and `hookbox compile` work on examples/plugins/wasm-shell-guard and runaway-hook. The copies are
# git-ignored. (`hookbox demo` does the same for its own scratch copy; this is for your hands.)
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
export CARGO_TARGET_DIR="$PWD/target/wasm-guests"
(cd guest-examples && cargo build -q --release --target wasm32-wasip2)
out="$CARGO_TARGET_DIR/wasm32-wasip2/release"
for hooks in examples/plugins/*/hooks/hooks.json; do
  dir=$(dirname "$hooks")
  for wasm in $(grep -o 'hooks/[A-Za-z0-9_]*\.wasm' "$hooks" | sort -u); do
    name=$(basename "$wasm")
    if [[ -f "$out/$name" ]]; then
      cp "$out/$name" "$dir/$name"
      echo "$dir/$name"
    fi
  done
done
