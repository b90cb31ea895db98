#!/bin/sh
# Builds hooks/{{snake}}.wasm from src/hook.js (JavaScript, componentize-qjs). Needs node >= 20 with
# npm; the first build installs componentize-qjs (pinned in package-lock.json) into node_modules.
set -eu
cd "$(dirname "$0")"
[ -f node_modules/componentize-qjs/package.json ] \
  || npm ci --no-audit --no-fund --loglevel=error
node build.mjs
