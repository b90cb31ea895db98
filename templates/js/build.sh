#!/bin/sh
# Builds hooks/{{snake}}.wasm from src/hook.js (JavaScript, componentize-js). Needs node >= 20 with
# npm; the first build installs componentize-js (pinned in package-lock.json) into node_modules.
set -eu
cd "$(dirname "$0")"
[ -f node_modules/@bytecodealliance/componentize-js/package.json ] \
  || npm ci --no-audit --no-fund --loglevel=error
node build.mjs
