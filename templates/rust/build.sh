#!/bin/sh
# Builds hooks/{{snake}}.wasm from guest/ (Rust). Needs cargo and, once,
# `rustup target add wasm32-wasip2`. Honours CARGO_TARGET_DIR (absolute).
set -eu
cd "$(dirname "$0")"
(cd guest && cargo build --release --target wasm32-wasip2)
cp "${CARGO_TARGET_DIR:-guest/target}/wasm32-wasip2/release/{{snake}}.wasm" hooks/{{snake}}.wasm
echo "built hooks/{{snake}}.wasm"
