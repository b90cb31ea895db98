#!/usr/bin/env bash
# Dependencies point one way (style.md, README "Architecture"): hookbox-core stays pure — no async
# runtime, no wasm engine, no process-spawning crate, no other hookbox crate; hookbox-trust is as
# pure and stands on core alone (its rule model); hookbox-command and
# hookbox-wasm know nothing of each other or of the host. Prints what is wrong and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

fail=0
deps_of() {
  # Normal (non-dev, non-build) dependencies, one name per line, without the crate itself.
  cargo tree -p "$1" -e normal --prefix none --format '{p}' 2>/dev/null \
    | sed 's/ .*//' | sort -u | grep -vx "$1"
}
forbid() {
  local crate=$1; shift
  local found
  found=$(deps_of "$crate" | grep -xE "$(IFS='|'; echo "$*")" || true)
  if [[ -n $found ]]; then
    echo "check-deps: $crate must not depend on: $(echo "$found" | tr '\n' ' ')" >&2
    fail=1
  fi
}

forbid hookbox-core 'tokio' 'tokio-.*' 'wasmtime.*' 'cranelift.*' 'hookbox-.*' 'nix' 'libc' 'async-.*' 'futures.*' 'mio'
# The agents' protocols and configuration files are pure like core: core is the only hookbox crate
# below them, and the host does not know them (the CLI and the server wire them in).
forbid hookbox-agents 'tokio' 'tokio-.*' 'wasmtime.*' 'cranelift.*' 'nix' 'libc' 'async-.*' 'futures.*' 'mio' 'hookbox-(command|wasm|http|host|server)'
forbid hookbox-host 'hookbox-agents'
forbid hookbox-trust 'tokio' 'tokio-.*' 'wasmtime.*' 'cranelift.*' 'hookbox-(command|wasm|http|host|server|bundled|guest|test-artifacts)' 'nix' 'libc' 'async-.*' 'futures.*' 'mio'
forbid hookbox-command 'wasmtime.*' 'hookbox-wasm' 'hookbox-host'
forbid hookbox-wasm 'hookbox-command' 'hookbox-host' 'hookbox-http'
forbid hookbox-http 'wasmtime.*' 'hookbox-wasm' 'hookbox-host' 'hookbox-command'
# Nothing below the host knows about tenants or HTTP serving.
forbid hookbox-host 'hookbox-server' 'axum.*'
# The binary carries example guests, never the hostile test guests (a dev-dependency only).
forbid hookbox 'hookbox-test-artifacts'
# The HTTP baseline of scripts/bench-http.sh is axum/hyper/tokio alone: no hookbox in it.
forbid bare-axum 'hookbox' 'hookbox-.*'

# The host is a facade over its modules: nothing below `host.rs` imports from it (what they share
# lives in `inner.rs` and `error.rs`). Above it is `tenants.rs` alone, with its own modules
# (`tenants/`): tenants own hosts.
back_up=$(grep -rln 'crate::host::' crates/host/src --include='*.rs' \
  | grep -vxE 'crates/host/src/(host|tenants|lib)\.rs|crates/host/src/tenants/[a-z_]+\.rs' || true)
if [[ -n $back_up ]]; then
  echo "check-deps: host modules import from the host facade (crate::host::): $(echo "$back_up" | tr '\n' ' ')" >&2
  fail=1
fi

if ((fail)); then exit 1; fi
echo "check-deps: ok (core, trust and agents are pure; command, http and wasm are independent; the host knows no server and no host module imports back up from its facade; the binary carries no test guest; the HTTP baseline holds no hookbox)"
