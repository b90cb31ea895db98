#!/bin/sh
# Builds hooks/{{snake}}.wasm from src/app.py (Python, componentize-py). Needs componentize-py
# 0.25.1: in .venv here (`python3 -m venv .venv && .venv/bin/pip install -r requirements.txt`)
# or on PATH. `--stub-wasi`: the component imports no WASI at all (componentize-py's CPython
# always imports wasi:sockets, which hookbox refuses), so no print, clock or files — use host.log.
set -eu
cd "$(dirname "$0")"
if [ -x .venv/bin/componentize-py ]; then
  cpy=.venv/bin/componentize-py
elif command -v componentize-py >/dev/null 2>&1; then
  cpy=componentize-py
else
  echo "build.sh: componentize-py is not installed: python3 -m venv .venv && .venv/bin/pip install -r requirements.txt" >&2
  exit 1
fi
"$cpy" -d wit -w hook componentize -p src app --stub-wasi -o hooks/{{snake}}.wasm
