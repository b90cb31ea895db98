#!/usr/bin/env bash
# Runs the example clients' tests (examples/clients/python, standard library only, and
# examples/clients/typescript, Node's fetch) against a live `hookbox serve` on loopback:
#   1. builds hookbox (debug, --workspace as CI does) and the two guests the test tenant serves;
#   2. writes a scratch tenants folder: tenant `demo`, a random token (only its sha256 on disk),
#      the shell guard on PreToolUse and a context hook on UserPromptSubmit;
#   3. starts `hookbox serve --listen 127.0.0.1:0`, reads the address from its first stdout line
#      and waits for /readyz;
#   4. runs both suites with HOOKBOX_URL, HOOKBOX_TENANT and HOOKBOX_TOKEN set;
#   5. stops the server with SIGTERM and checks it drained and exited 0.
# Needs python3 >= 3.9, and node >= 20 with npm (`npm ci` installs the TypeScript compiler, a dev
# dependency, from the npm registry on the first run).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
started=$SECONDS
die() { echo "test-clients: $*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 is not installed"
command -v node >/dev/null || die "node is not installed (need >= 20)"
command -v npm >/dev/null || die "npm is not installed (it comes with node)"

echo "test-clients: building hookbox and the guests"
(cd "$root" && cargo build --workspace --quiet)
guests="$target/wasm-guests"
(cd "$root/guest-examples" && CARGO_TARGET_DIR="$guests" \
  cargo build --quiet --release --target wasm32-wasip2 -p shell-guard -p context-injection)

scratch="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

token="$(python3 -c 'import secrets; print(secrets.token_urlsafe(24))')"
digest="$(printf %s "$token" | sha256sum | cut -d' ' -f1)"
hooks="$scratch/tenants/demo/plugins/guard/hooks"
mkdir -p "$hooks"
cp "$guests/wasm32-wasip2/release/shell_guard.wasm" "$guests/wasm32-wasip2/release/context_injection.wasm" "$hooks/"
cat >"$scratch/tenants/demo/tenant.toml" <<EOF
token_sha256 = "$digest"
[policy]
max_rules = 8
EOF
cat >"$hooks/hooks.json" <<'EOF'
{
  "hooks": {
    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "wasm", "component": "hooks/shell_guard.wasm" }] }],
    "UserPromptSubmit": [{ "hooks": [
      { "type": "wasm", "component": "hooks/context_injection.wasm", "config": { "context": "Project ATLAS." } }
    ] }]
  }
}
EOF
cat >"$scratch/serve.toml" <<EOF
tenants_dir = "tenants"
state_dir = "state"
cache_dir = "$target/tmp/test-clients-cache"
log_format = "json"
EOF

"$target/debug/hookbox" serve --config "$scratch/serve.toml" --listen 127.0.0.1:0 \
  >"$scratch/stdout" 2>"$scratch/stderr" &
pid=$!
for _ in $(seq 600); do
  [[ -s $scratch/stdout ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$scratch/stderr" >&2; die "hookbox serve exited at start"; }
  sleep 0.1
done
addr="$(head -n1 "$scratch/stdout")"
[[ -n $addr ]] || die "hookbox serve printed no address"
export HOOKBOX_URL="http://$addr" HOOKBOX_TENANT=demo HOOKBOX_TOKEN="$token"
python3 - <<'EOF' || { cat "$scratch/stderr" >&2; die "the server never became ready"; }
import os, time, urllib.request
for _ in range(600):
    try:
        with urllib.request.urlopen(os.environ["HOOKBOX_URL"] + "/readyz", timeout=2) as r:
            if r.status == 200:
                raise SystemExit(0)
    except OSError:
        pass
    time.sleep(0.1)
raise SystemExit(1)
EOF
echo "test-clients: hookbox serve on $addr"

echo "test-clients: python"
(cd "$root/examples/clients/python" && python3 -B -m unittest -v 2>&1)

echo "test-clients: typescript"
(cd "$root/examples/clients/typescript" && npm ci --no-audit --no-fund --loglevel=error && npm test --silent)

kill -TERM "$pid"
code=0
wait "$pid" || code=$?
pid=""
[[ $code == 0 ]] || { cat "$scratch/stderr" >&2; die "hookbox serve exited $code after SIGTERM"; }
grep -q '"stopped"\|stopped' "$scratch/stderr" || die "hookbox serve did not report a drained stop"
echo "test-clients: all green in $((SECONDS - started)) s"
