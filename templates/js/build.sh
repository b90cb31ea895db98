#!/bin/sh
# Builds hooks/{{snake}}.wasm from src/hook.js. When this machine's hookbox carries its QuickJS
# runtime (`hookbox build-js --check`), hookbox builds it: ~0.95 MB, ~0.1 ms per event, nothing to
# install. Otherwise componentize-qjs does (needs node >= 20 with npm; the first build installs it,
# pinned in package-lock.json, into node_modules): ~1.6 MB, ~0.25 ms per event. Both run the same
# source; HOOKBOX_JS_BUILD=npm forces the second.
set -eu
cd "$(dirname "$0")"
if [ "${HOOKBOX_JS_BUILD:-}" != npm ] && hookbox build-js --check >/dev/null 2>&1; then
  hookbox build-js src/hook.js -o hooks/{{snake}}.wasm
else
  [ -f node_modules/componentize-qjs/package.json ] \
    || npm ci --no-audit --no-fund --loglevel=error
  node build.mjs
fi
