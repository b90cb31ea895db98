#!/usr/bin/env bash
# Builds a JavaScript hook (an ES module exporting `handler`, importing `config`/`log` from
# `hookbox:hook/host@0.1.0`) into a pre-initialised QuickJS component of hookbox's `hook` world:
#
#   guest-examples/js-quickjs/build.sh HOOK.js OUT.wasm
#
# Steps, each cached by cargo after its first run:
#   1. runtime/: QuickJS (rquickjs, its C compiled by clang for wasm32) in a Rust component,
#      `cargo build --target wasm32-wasip2 --release` (~1 min the first time);
#   2. build/: the native pre-initialiser (wasmtime 48.0.8 and its wizer), `cargo build --profile tool`
#      (a few minutes the first time: wasmtime and Cranelift, without LTO);
#   3. hookbox-js-build: instantiates the runtime, evaluates HOOK.js in it and snapshots the
#      result into OUT.wasm (~2 s).
#
# Needs: cargo with the wasm32-wasip2 target, clang with the wasm32 target (CC_QUICKJS, or
# clang-19, or clang) and wasi-libc's headers (Debian: `apt-get install clang-19 wasi-libc`;
# elsewhere WASI_SYSROOT=<wasi-sdk>/share/wasi-sysroot). Builds in
# ${CARGO_TARGET_DIR:-<this folder>/target}/js-quickjs.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
die() { echo "js-quickjs: $*" >&2; exit 1; }
[[ $# -eq 2 ]] || die "usage: build.sh HOOK.js OUT.wasm"
source_js="$(realpath "$1")" || die "cannot find $1"
output="$(realpath -m "$2")"
# Its own folder in the target dir: the runtime's RUSTFLAGS differ from the Rust guests' and
# would rebuild their shared dependencies back and forth.
target="$(realpath -m "${CARGO_TARGET_DIR:-$here/target}")/js-quickjs"

cc="${CC_QUICKJS:-}"
if [[ -z $cc ]]; then
  for candidate in clang-19 clang-20 clang-18 clang; do
    if command -v "$candidate" >/dev/null; then cc="$candidate"; break; fi
  done
fi
[[ -n $cc ]] || die "no clang found (Debian: apt-get install clang-19 wasi-libc; or set CC_QUICKJS)"
ar="llvm-ar${cc#clang}"
command -v "$ar" >/dev/null || ar=llvm-ar
command -v "$ar" >/dev/null || ar=ar
# The C's own paths (assert()'s __FILE__) name the build folder; mapped, the component holds no
# path of this machine, and is the same bytes wherever it is built.
cflags="--target=wasm32-wasi -ffile-prefix-map=$target=/js-quickjs"
if [[ -n ${WASI_SYSROOT:-} ]]; then
  cflags+=" --sysroot=$WASI_SYSROOT"
elif [[ ! -f /usr/include/wasm32-wasi/stdlib.h ]]; then
  die "wasi-libc's headers are missing (Debian: apt-get install wasi-libc; or set WASI_SYSROOT)"
fi

# rquickjs-sys would download a WASI SDK; we give it our clang and headers instead. The C
# library itself comes from Rust's wasm32-wasip2 target at link time.
export RQUICKJS_SYS_NO_WASI_SDK=1 CC_wasm32_wasip2="$cc" AR_wasm32_wasip2="$ar" \
  CFLAGS_wasm32_wasip2="$cflags" CARGO_TARGET_DIR="$target"
cd "$here"
# The runtime gets guest-examples/.cargo/config.toml's 64 KiB stack, as every Rust guest here.
cargo build --quiet --release --target wasm32-wasip2 -p hookbox-js-runtime
cargo build --quiet --profile tool -p hookbox-js-build
mkdir -p "$(dirname "$output")"
"$target/tool/hookbox-js-build" \
  "$target/wasm32-wasip2/release/hookbox_js_runtime.wasm" "$source_js" "$output"
