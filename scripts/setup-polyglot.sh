#!/usr/bin/env bash
# Installs the tooling of the JavaScript and Python guest examples, so crates/test-artifacts
# builds them and the polyglot tests (crates/wasm/tests/all/polyglot.rs) run instead of being
# reported as ignored:
#   - guest-examples/js: `npm ci` (componentize-js and componentize-qjs, pinned in
#     package.json/package-lock.json; the js templates' `npm ci` then finds componentize-qjs in
#     npm's cache);
#   - guest-examples/python: a venv at ${CARGO_TARGET_DIR:-target}/polyglot/venv with
#     requirements.txt (componentize-py, pinned) — the place the build script looks first;
#   - guest-examples/js-quickjs: clang with the wasm32 target and wasi-libc's headers, from
#     Debian's packages (`apt-get install clang-19 wasi-libc`, as root) when they are missing.
# Idempotent and fast when nothing changed: each install is skipped while a stamp holding the
# sha256 of its lockfile matches. Needs node >= 20 with npm, and python3 >= 3.10 with venv;
# reaches the npm registry and PyPI only on a real install.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# Resolved against the caller's directory, as cargo resolves a relative CARGO_TARGET_DIR.
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
venv="$target/polyglot/venv"
started=$SECONDS

die() { echo "setup-polyglot: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

command -v node >/dev/null || die "node is not installed (need >= 20 with npm)"
command -v npm >/dev/null || die "npm is not installed (it comes with node)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
((node_major >= 20)) || die "node $(node --version) is too old: componentize-js needs >= 20"
command -v python3 >/dev/null || die "python3 is not installed (need >= 3.10 with venv)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "$(python3 --version) is too old: componentize-py needs >= 3.10"

# JavaScript: node_modules stays beside package.json, where `node build.mjs` resolves it.
js="$root/guest-examples/js"
js_stamp="$js/node_modules/.hookbox-setup.sha256"
if [[ -f $js_stamp && "$(cat "$js_stamp")" == "$(sha "$js/package-lock.json")" ]]; then
  echo "setup-polyglot: guest-examples/js/node_modules is up to date"
else
  echo "setup-polyglot: npm ci in guest-examples/js"
  (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
  sha "$js/package-lock.json" >"$js_stamp"
fi

# Python: a venv of our own, so nothing is installed into the system or user site-packages.
py_reqs="$root/guest-examples/python/requirements.txt"
py_stamp="$venv/.hookbox-setup.sha256"
if [[ -x $venv/bin/componentize-py && -f $py_stamp && "$(cat "$py_stamp")" == "$(sha "$py_reqs")" ]]; then
  echo "setup-polyglot: $venv is up to date"
else
  echo "setup-polyglot: installing guest-examples/python/requirements.txt into $venv"
  [[ -x $venv/bin/python3 ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$py_reqs"
  sha "$py_reqs" >"$py_stamp"
fi

# QuickJS: its C is compiled for wasm32 by clang against wasi-libc's headers (the build finds
# clang-19, clang-20, clang-18 or clang; CC_QUICKJS and WASI_SYSROOT point elsewhere).
have_clang() { command -v clang-19 || command -v clang-20 || command -v clang-18 || command -v clang; }
if [[ -n ${CC_QUICKJS:-} || -n "$(have_clang)" ]] \
  && [[ -n ${WASI_SYSROOT:-} || -f /usr/include/wasm32-wasi/stdlib.h ]]; then
  echo "setup-polyglot: clang and wasi-libc are installed"
elif command -v apt-get >/dev/null && ((EUID == 0)); then
  echo "setup-polyglot: apt-get install clang-19 wasi-libc (for guest-examples/js-quickjs)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 wasi-libc >/dev/null \
    || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 wasi-libc >/dev/null; } \
    || die "cannot install clang-19 and wasi-libc"
else
  die "the QuickJS toolchain needs clang with the wasm32 target and wasi-libc's headers: \
apt-get install clang-19 wasi-libc (as root), or set CC_QUICKJS and WASI_SYSROOT"
fi

echo "setup-polyglot: node $(node --version), $("$venv/bin/componentize-py" --version), $("$(have_clang || echo "$CC_QUICKJS")" --version | head -1) ($((SECONDS - started)) s)"
