#!/usr/bin/env bash
# Builds the example guest components from source (guest-examples/) and copies each one an
# example plugin names as hooks/<guest>.wasm into that plugin, so that `hookbox dispatch` and
# `hookbox compile` work on examples/plugins/wasm-shell-guard, runaway-hook and polyglot-guests.
# The Rust guests always; the JavaScript and Python ones (polyglot-guests) when their tooling is
# installed (scripts/setup-polyglot.sh), otherwise it says what is skipped. The copies are
# git-ignored. (`hookbox demo` does the same for its own scratch copy; this is for your hands.)
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
root="$PWD"
export CARGO_TARGET_DIR="$root/target/wasm-guests"
(cd guest-examples && cargo build -q --release --target wasm32-wasip2)
built="$CARGO_TARGET_DIR/wasm32-wasip2/release"
# Not target/wasm-guests/polyglot: that is the build scripts' own output, kept in step by stamps.
polyglot="$root/target/example-guests"
mkdir -p "$polyglot"

# JavaScript: componentize-js and componentize-qjs from guest-examples/js/node_modules (npm ci).
if [[ -d guest-examples/js/node_modules/@bytecodealliance/componentize-js ]]; then
  node guest-examples/js/context-injection/build.mjs "$polyglot/context_injection_js.wasm"
  node guest-examples/js/context-injection/build-qjs.mjs "$polyglot/context_injection_cqjs.wasm"
else
  echo "skipped context_injection_js.wasm: no guest-examples/js/node_modules (run scripts/setup-polyglot.sh)" >&2
fi
# Python: componentize-py from the venv scripts/setup-polyglot.sh makes, or from PATH.
venv_bin="$root/target/polyglot/venv/bin"
if [[ -x $venv_bin/componentize-py ]] || command -v componentize-py >/dev/null; then
  (cd guest-examples/python/shell-guard \
    && PATH="$venv_bin:$PATH" componentize-py -d ../../../wit -w hook componentize app \
      --stub-wasi -o "$polyglot/shell_guard_py.wasm" >/dev/null)
else
  echo "skipped shell_guard_py.wasm: no componentize-py (run scripts/setup-polyglot.sh)" >&2
fi

for hooks in examples/plugins/*/hooks/hooks.json; do
  dir=$(dirname "$hooks")
  for wasm in $(grep -o 'hooks/[A-Za-z0-9_]*\.wasm' "$hooks" | sort -u); do
    name=$(basename "$wasm")
    for from in "$built/$name" "$polyglot/$name"; do
      if [[ -f $from ]]; then
        cp "$from" "$dir/$name"
        echo "$dir/$name"
        break
      fi
    done
  done
done
