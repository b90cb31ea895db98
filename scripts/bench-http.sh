#!/usr/bin/env bash
# Measures `hookbox serve` the way its users will (issue 18 §4): `wrk` over loopback against
# `hookbox serve` and, in the same run, against `bare-axum` (crates/bare-axum: the same
# axum/hyper/tokio, served the same way, with hookbox taken out) — the baseline every ratio is
# taken against. At 1 connection (`wrk -t1 -c1`), 8 and 64 (`wrk -t2`), with `--latency`, after
# a warm-up, for:
#   bare  GET  /healthz                       bare  POST /dispatch (a dispatch body, parsed; its
#                                             answer padded to the typed-wasm answer's size)
#   serve GET  /healthz                       serve POST /v1/tenants/idle/dispatch (no rule matches)
#   serve POST /v1/tenants/wasm/dispatch      (the no-op typed guest on PreToolUse; the lean answer)
#   serve POST /v1/tenants/wasm/dispatch?report=full  (the same, answered with the full report)
#   serve POST /v1/tenants/wasm/claude-code   (a Claude Code PreToolUse payload, same guest)
# Both tenants have the default policy (replay on, as users get it) but for quotas wide enough
# for 64 connections, and the server the default configuration but for its folders and the
# per-peer connection cap (wrk is one peer). Every answer is checked once before measuring (the wasm
# tenant really ran its guest, the idle one matched nothing), and any non-2xx answer or socket
# error during a run fails the script. Then one more 1-connection run of the typed-wasm tenant
# reads each answer's `duration_ms` (the server's own clock around the tenant's dispatch: match,
# run, aggregate — no HTTP, no JSON, no replay) for the in-process tenant p50 of the same run.
# Prints one table (with each answer's size in bytes) and the ratios the goals of issue 18 name.
# A hookbox from before the lean answer (issue 18 §4) answers the full report on both dispatch
# rows (it ignores the query): compare binaries with the same script.
#
# Usage: scripts/bench-http.sh [--quick]
#   --quick          1 s warm-ups and 2 s runs instead of 2 s and 5 s (a smoke test)
# Environment:
#   HOOKBOX=path     a prebuilt `hookbox` (else `cargo build --release --bin hookbox`)
#   BARE=path        a prebuilt `bare-axum` (else `cargo build --release -p bare-axum`)
#   NOOP_WASM=path   the no-op typed guest (else target/wasm-guests/…/noop.wasm, built if missing)
#   WRK_LOG=path     append every raw `wrk` output there
#   PERF_DATA=path   `perf record -g` the server during the 8-connection typed-wasm run
# Needs wrk (Debian: apt-get install wrk), curl, awk, sha256sum. Build with --release: debug
# numbers mean nothing. The servers and the scratch folder are removed however it ends.
set -euo pipefail

here="$PWD"
root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
die() { echo "bench-http: $*" >&2; exit 1; }
say() { echo "bench-http: $*" >&2; }
abs() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }

quick=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument \`$arg\` (usage: scripts/bench-http.sh [--quick])" ;;
  esac
done
if ((quick)); then warm=1 secs=2; else warm=2 secs=5; fi

for tool in wrk curl awk sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is not installed (wrk: apt-get install wrk)"
done

# --- Binaries and the guest ----------------------------------------------------------------
if [[ -n ${HOOKBOX:-} ]]; then
  hookbox="$(abs "$HOOKBOX")"
else
  say "building hookbox (release)"
  (cd "$root" && cargo build --release --quiet --bin hookbox)
  hookbox="$target/release/hookbox"
fi
if [[ -n ${BARE:-} ]]; then
  bare="$(abs "$BARE")"
else
  say "building bare-axum (release)"
  (cd "$root" && cargo build --release --quiet -p bare-axum)
  bare="$target/release/bare-axum"
fi
[[ -x $hookbox ]] || die "no hookbox binary at $hookbox"
[[ -x $bare ]] || die "no bare-axum binary at $bare"
noop="${NOOP_WASM:+$(abs "$NOOP_WASM")}"
if [[ -z $noop ]]; then
  noop="$target/wasm-guests/wasm32-wasip2/release/noop.wasm"
  if [[ ! -f $noop ]]; then
    say "building the no-op guest (guest-examples/noop)"
    (cd "$root/guest-examples" && CARGO_TARGET_DIR="$target/wasm-guests" \
      cargo build --quiet --release --target wasm32-wasip2 -p noop)
  fi
fi
[[ -f $noop ]] || die "no no-op guest at $noop"

# --- Scratch folder, servers, cleanup --------------------------------------------------------
scratch="$(mktemp -d "${TMPDIR:-/tmp}/hookbox-bench-http.XXXXXX")"
serve_pid='' bare_pid='' perf_pid=''
cleanup() {
  # Only the script's own shell: a subshell that exits must not stop the servers under it.
  [[ $BASHPID == "$$" ]] || return 0
  local pid
  for pid in "$perf_pid" "$serve_pid" "$bare_pid"; do
    if [[ -n $pid ]]; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  serve_pid='' bare_pid='' perf_pid=''
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

token="$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
digest="$(printf %s "$token" | sha256sum | cut -d' ' -f1)"
# tenant ID EVENT MATCHER: the no-op guest on EVENT (MATCHER: tool name, or "" for none);
# tenant.toml holds the token's digest and, in [policy], quotas wide enough for 64 connections
# (as `hookbox bench --serve` sets them; the defaults refuse a tenant's 33rd dispatch in flight
# with 429): every other policy value is its default, replay on.
tenant() {
  local hooks="$scratch/tenants/$1/plugins/noop/hooks"
  mkdir -p "$hooks"
  cp "$noop" "$hooks/noop.wasm"
  printf '{"hooks": {"%s": [{"matcher": "%s", "hooks": [{"type": "wasm", "component": "hooks/noop.wasm"}]}]}}\n' \
    "$2" "$3" >"$hooks/hooks.json"
  printf 'token_sha256 = "%s"\n[policy]\nmax_hooks_in_flight = 256\nmax_pool_slots = 256\nmax_dispatches_in_flight = 128\n' \
    "$digest" >"$scratch/tenants/$1/tenant.toml"
}
tenant idle SessionStart ''
tenant wasm PreToolUse Bash
cat >"$scratch/serve.toml" <<EOF
# The defaults (hookbox serve --print-default-config) but for the folders and the per-peer cap:
# every wrk connection comes from one peer, as through a proxy.
tenants_dir = "tenants"
state_dir = "state"
cache_dir = "cache"
[limits]
max_connections_per_peer = 1024
EOF

# start NAME CMD...: starts a server with stdout/stderr in the scratch folder; sets ${NAME}_pid at
# once (so that cleanup stops it whatever happens next) and $started_addr (its first stdout line).
start() {
  local name=$1
  shift
  # Made before the server starts: the background job opens its redirections in its own time.
  : >"$scratch/$name.out"
  "$@" >>"$scratch/$name.out" 2>"$scratch/$name.err" &
  local started_pid=$!
  printf -v "${name}_pid" %s "$started_pid"
  local i
  for ((i = 0; i < 600; i++)); do
    started_addr="$(head -n1 "$scratch/$name.out" 2>/dev/null || true)"
    [[ -n $started_addr ]] && return 0
    kill -0 "$started_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$scratch/$name.err" >&2
  die "$name did not print its address"
}
start serve "$hookbox" serve --config "$scratch/serve.toml" --listen 127.0.0.1:0
serve_url="http://$started_addr"
for ((i = 0; ; i++)); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' "$serve_url/readyz") == 200 ]] && break
  ((i < 1200)) || { cat "$scratch/serve.err" >&2; die "hookbox serve never became ready"; }
  sleep 0.1
done

# --- Requests, each checked once -------------------------------------------------------------
dispatch_body='{"event": "PreToolUse", "payload": {"session_id": "bench-http", "tool_name": "Bash", "tool_input": {"command": "git status"}, "tool_use_id": "toolu_bench"}}'
claude_body="{\"session_id\": \"bench-http\", \"transcript_path\": \"$scratch/transcript.jsonl\", \"cwd\": \"$scratch\", \"permission_mode\": \"default\", \"hook_event_name\": \"PreToolUse\", \"tool_name\": \"Bash\", \"tool_input\": {\"command\": \"git status\", \"description\": \"Show the working tree status\"}, \"tool_use_id\": \"toolu_bench\"}"

# The numbers wrk's `done` hands over, on one line the script reads.
report='function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH %d %d %d %d %d %d %d %d %d\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(99), e.status, e.connect,
    e.read, e.write, e.timeout))
end'
# lua NAME [BODY]: a wrk script; with BODY, a POST of it with the tenant's token.
lua() {
  {
    if (($# > 1)); then
      printf 'wrk.method = "POST"\nwrk.body = [==[%s]==]\n' "$2"
      printf 'wrk.headers["Content-Type"] = "application/json"\n'
      printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token"
    fi
    echo "$report"
  } >"$scratch/$1.lua"
}

# check NAME URL BODY-OR-"" PATTERN...: one request; 200 and every PATTERN in the answer.
check() {
  local name=$1 url=$2 body=$3
  shift 3
  local args=(-s -w '\n%{http_code}' -H "Authorization: Bearer $token")
  [[ -n $body ]] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  local out status pattern
  out="$(curl "${args[@]}" "$url")" || die "$name: $url did not answer"
  status="${out##*$'\n'}" out="${out%$'\n'*}"
  [[ $status == 200 ]] || die "$name: $url answered $status: $out"
  for pattern in "$@"; do
    grep -qF -- "$pattern" <<<"$out" || die "$name: the answer lacks \`$pattern\`: $out"
  done
  if [[ $name == serve-wasm* ]] && grep -qF '"failure"' <<<"$out"; then
    die "$name: the guest failed: $out"
  fi
  size[$name]="$(LC_ALL=C; echo "${#out}")"
}
declare -A size

names=(bare-healthz bare-dispatch serve-healthz serve-idle serve-wasm serve-wasm-full serve-claude-code)
declare -A url label
# Bare axum's URLs once it runs (it starts after the checks below: its answer's size is theirs).
label[bare-healthz]="bare  GET  /healthz" label[bare-dispatch]="bare  POST /dispatch"
url[serve-healthz]="$serve_url/healthz" label[serve-healthz]="serve GET  /healthz"
url[serve-idle]="$serve_url/v1/tenants/idle/dispatch" label[serve-idle]="serve POST idle tenant dispatch"
url[serve-wasm]="$serve_url/v1/tenants/wasm/dispatch" label[serve-wasm]="serve POST typed-wasm dispatch"
url[serve-wasm-full]="$serve_url/v1/tenants/wasm/dispatch?report=full" label[serve-wasm-full]="serve POST typed-wasm ?report=full"
url[serve-claude-code]="$serve_url/v1/tenants/wasm/claude-code" label[serve-claude-code]="serve POST typed-wasm claude-code"

lua bare-healthz
lua serve-healthz
lua bare-dispatch "$dispatch_body"
lua serve-idle "$dispatch_body"
lua serve-wasm "$dispatch_body"
lua serve-wasm-full "$dispatch_body"
lua serve-claude-code "$claude_body"
check serve-healthz "${url[serve-healthz]}" '' '"status":"ok"'
check serve-idle "${url[serve-idle]}" "$dispatch_body" '"matched_rule_count":0' '"outcome":"allow"'
check serve-wasm "${url[serve-wasm]}" "$dispatch_body" '"matched_rule_count":1' '"outcome":"allow"'
check serve-wasm-full "${url[serve-wasm-full]}" "$dispatch_body" '"matched_rule_count":1' '"outcome":"allow"' '"handler_type":"wasm"'
check serve-claude-code "${url[serve-claude-code]}" "$claude_body" '{}'
# Bare axum answers as many bytes as the typed-wasm tenant does: both servers write the same.
start bare "$bare" --listen 127.0.0.1:0 --answer-bytes "${size[serve-wasm]}"
bare_url="http://$started_addr"
url[bare-healthz]="$bare_url/healthz" url[bare-dispatch]="$bare_url/dispatch"
check bare-healthz "${url[bare-healthz]}" '' '{"status":"ok"}'
check bare-dispatch "${url[bare-dispatch]}" "$dispatch_body" '"outcome":"allow"'

# --- Measuring -------------------------------------------------------------------------------
declare -A rps p50 p99
# measure NAME CONNS SECONDS [record]: one wrk run; fails on any non-2xx answer or socket error.
# With `record`, fills rps/p50/p99[NAME@CONNS].
measure() {
  local name=$1 conns=$2 s=$3 threads=1 out line
  ((conns > 1)) && threads=2
  out="$(wrk -t"$threads" -c"$conns" -d"${s}s" --latency -s "$scratch/$name.lua" "${url[$name]}" 2>&1)" \
    || die "wrk failed on $name: $out"
  [[ -n ${WRK_LOG:-} ]] && printf '== %s, %s connection(s), %s s\n%s\n' "$name" "$conns" "$s" "$out" >>"$(abs "$WRK_LOG")"
  line="$(grep '^BENCH ' <<<"$out")" || die "no summary from wrk on $name: $out"
  local _ requests duration l50 l99 status connect read write timeout
  read -r _ requests duration l50 l99 status connect read write timeout <<<"$line"
  ((requests > 0)) || die "$name: no request completed: $out"
  ((status == 0)) || die "$name at $conns: $status answers were not 2xx/3xx: $out"
  ((connect + read + write + timeout == 0)) \
    || die "$name at $conns: socket errors (connect $connect, read $read, write $write, timeout $timeout): $out"
  if [[ ${4:-} == record ]]; then
    rps[$name@$conns]="$(awk -v n="$requests" -v us="$duration" 'BEGIN { printf "%.0f", n / (us / 1e6) }')"
    p50[$name@$conns]=$l50 p99[$name@$conns]=$l99
  fi
}

say "warming up (${warm} s each, 8 connections)"
for name in "${names[@]}"; do measure "$name" 8 "$warm"; done
for conns in 1 8 64; do
  for name in "${names[@]}"; do
    say "$name, $conns connection(s), $secs s"
    if [[ -n ${PERF_DATA:-} && $name == serve-wasm && $conns == 8 ]]; then
      perf record -q -g -p "$serve_pid" -o "$(abs "$PERF_DATA")" -- sleep "$secs" 2>/dev/null &
      perf_pid=$!
    fi
    measure "$name" "$conns" "$secs" record
    if [[ -n $perf_pid ]]; then wait "$perf_pid" || true; perf_pid=''; fi
  done
done

# The in-process tenant p50 of this run: the typed-wasm tenant's own `duration_ms`, read from
# every answer of one more 1-connection run (reading bodies slows wrk, so not a measured run).
say "serve-wasm, 1 connection, $secs s, reading the server's duration_ms"
cat >"$scratch/serve-wasm-durations.lua" <<EOF
$(cat "$scratch/serve-wasm.lua")
local out = io.open("$scratch/durations", "a")
out:setvbuf("line")
function response(status, headers, body)
  local d = body:match('"duration_ms":([0-9.eE+-]+)')
  out:write(d or "missing", "\n")
end
EOF
url[serve-wasm-durations]="${url[serve-wasm]}"
measure serve-wasm-durations 1 "$secs"
! grep -q missing "$scratch/durations" || die "an answer of the wasm tenant had no top-level duration_ms (a leaner answer? ask for the field in serve-wasm-durations.lua)"
inproc_p50="$(sort -g "$scratch/durations" | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", v[int((NR + 1) / 2)] * 1000 }')"
[[ -n $inproc_p50 ]] || die "no duration_ms was read"

threads() { # PID: its threads, counted by name ("3 tokio-runtime-w, 1 bare-axum")
  cat /proc/"$1"/task/*/comm 2>/dev/null | sort | uniq -c | sort -rn \
    | awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }'
}
serve_threads="$(threads "$serve_pid")" bare_threads="$(threads "$bare_pid")"
cleanup

# --- The table -------------------------------------------------------------------------------
echo "hookbox serve vs bare axum, wrk $(wrk -v 2>&1 | awk 'NR == 1 { print $2 }'), $(nproc) CPUs, ${secs} s per run$( ((quick)) && echo ' (--quick: a smoke test)')"
echo "hookbox: $hookbox; bare-axum: $bare"
echo "hookbox serve: $serve_threads; bare-axum: $bare_threads"
echo
printf '%-36s %5s %10s %9s %9s %7s\n' endpoint conns 'req/s' 'p50 µs' 'p99 µs' bytes
for conns in 1 8 64; do
  for name in "${names[@]}"; do
    printf '%-36s %5s %10s %9s %9s %7s\n' "${label[$name]}" "$conns" "${rps[$name@$conns]}" \
      "${p50[$name@$conns]}" "${p99[$name@$conns]}" "${size[$name]}"
  done
done
echo
# verdict VALUE OP GOAL: "met" or "missed".
verdict() { awk -v v="$1" -v g="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? (v >= g) : (v <= g); print ok ? "met" : "missed" }'; }
# ratio NAME CONNS: NAME's req/s ÷ bare dispatch's at CONNS.
ratio() { awk -v a="${rps[$1@$2]}" -v b="${rps[bare-dispatch@$2]}" 'BEGIN { printf "%.2f", a / b }'; }
for conns in 1 8 64; do
  printf 'at %2s connection(s): idle tenant ÷ bare %5s×, typed-wasm ÷ bare %5s× (req/s)\n' \
    "$conns" "$(ratio serve-idle "$conns")" "$(ratio serve-wasm "$conns")"
done
idle_ratio="$(ratio serve-idle 8)" wasm_ratio="$(ratio serve-wasm 8)"
wasm_p50_1=${p50[serve-wasm@1]} bare_p50_1=${p50[bare-dispatch@1]}
added=$((wasm_p50_1 - bare_p50_1))
allowed="$(awk -v p="$inproc_p50" 'BEGIN { printf "%.1f", p + 15 }')"
printf 'idle tenant req/s at 8 ÷ bare dispatch req/s at 8:  %5s×  (goal ≥ 0.8×: %s)\n' "$idle_ratio" "$(verdict "$idle_ratio" '>=' 0.8)"
printf 'typed-wasm req/s at 8 ÷ bare dispatch req/s at 8:   %5s×  (goal ≥ 0.5×: %s)\n' "$wasm_ratio" "$(verdict "$wasm_ratio" '>=' 0.5)"
printf 'typed-wasm p50 at 1 − bare dispatch p50 at 1:        %5s µs (goal ≤ in-process tenant p50 %s µs + 15 = %s µs: %s)\n' \
  "$added" "$inproc_p50" "$allowed" "$(verdict "$added" '<=' "$allowed")"
echo "(in-process tenant p50: the typed-wasm tenant's own duration_ms over one more 1-connection run of $secs s)"
