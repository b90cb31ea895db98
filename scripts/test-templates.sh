#!/usr/bin/env bash
# Generates every plugin template of `hookbox new` (each --kind × --lang) into a scratch folder
# and runs the two commands its README gives, exactly as written, from the plugin's folder:
#   - the ```sh build block, then the ```sh test block (bash -euo pipefail, stdin /dev/null);
#   - the test block's exit code and stdout are checked against the ```text expect block (first
#     line `exit N`; every other line a substring stdout must contain);
#   - `hookbox` on PATH is ${HOOKBOX_BIN:-<target>/debug/hookbox} (build it first: `cargo build`);
#   - CARGO_TARGET_DIR=<target>/wasm-guests for the Rust guests (shared with crates/test-artifacts
#     and scripts/test-guest-readmes.sh: the SDK's dependencies are compiled once);
#   - componentize-py from <target>/polyglot/venv/bin (scripts/setup-polyglot.sh) is on PATH, and
#     the npm cache that setup-polyglot.sh filled serves the JavaScript templates' `npm ci`.
# <target> is ${CARGO_TARGET_DIR:-<repo>/target}.
#
# Usage: scripts/test-templates.sh [LANG...]   (default: sh python node rust js python-wasm)
# The js and python-wasm templates need their tooling (scripts/setup-polyglot.sh); without it this
# script fails, unless HOOKBOX_SKIP_POLYGLOT=1, which skips them. HOOKBOX_TEMPLATE_JOBS templates
# run at once (default 3).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
hookbox="$(realpath -m "${HOOKBOX_BIN:-$target/debug/hookbox}")"
venv_bin="$target/polyglot/venv/bin"
jobs="${HOOKBOX_TEMPLATE_JOBS:-3}"
section="## Build and test"
kinds=(guard context stop audit)
langs=("$@")
((${#langs[@]} > 0)) || langs=(sh python node rust js python-wasm)
started=$SECONDS

die() { echo "test-templates: $*" >&2; exit 1; }
[[ -x $hookbox ]] || die "no hookbox binary at $hookbox: run \`cargo build\` first (or set HOOKBOX_BIN)"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "HOOKBOX_TEMPLATE_JOBS must be a positive number, not '$jobs'"

selected=()
for lang in "${langs[@]}"; do
  case "$lang" in
    js | python-wasm)
      if [[ ${HOOKBOX_SKIP_POLYGLOT:-} == 1 ]]; then
        echo "skip $lang (HOOKBOX_SKIP_POLYGLOT=1)"
        continue
      fi
      if [[ $lang == js ]]; then
        command -v npm >/dev/null || die "the js templates need node and npm (scripts/setup-polyglot.sh)"
      else
        [[ -x $venv_bin/componentize-py ]] || command -v componentize-py >/dev/null \
          || die "the python-wasm templates need componentize-py: run scripts/setup-polyglot.sh (or HOOKBOX_SKIP_POLYGLOT=1)"
      fi
      ;;
    sh | python | node | rust) ;;
    *) die "unknown language '$lang' (sh python node rust js python-wasm)" ;;
  esac
  selected+=("$lang")
done

# Prints the body of the fenced block whose info string is $2 inside the README's section; with
# $3 = count, how many such blocks the section has.
block() {
  awk -v want="$2" -v mode="${3:-print}" -v section="$section" '
    fence {
      if ($0 ~ /^```[ \t]*$/) { fence = 0; take = 0; next }
      if (take && mode == "print") print
      next
    }
    /^```/ {
      fence = 1; info = substr($0, 4); sub(/[ \t]+$/, "", info)
      take = (in_section && info == want && n++ == 0)
      next
    }
    /^#+ / { if ($0 ~ /^## /) in_section = ($0 == section); if ($0 ~ /^# /) in_section = 0 }
    END { if (mode == "count") print n + 0 }
  ' "$1"
}

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/bin"
ln -s "$hookbox" "$scratch/bin/hookbox"
path="$scratch/bin:$PATH"
if [[ -d $venv_bin ]]; then path="$scratch/bin:$venv_bin:$PATH"; fi

# Generates one template and runs its README; the verdict on stdout, details in $scratch/<id>.fail.
run_template() {
  local kind="$1" lang="$2" id="$1-$2" dir log fail info count
  dir="$scratch/plugins/$id"
  log="$scratch/$id"
  fail="$scratch/$id.fail"
  mkdir -p "$scratch/plugins"
  if ! "$hookbox" new "$id" --kind "$kind" --lang "$lang" --dir "$dir" >"$log.new" 2>&1; then
    { echo "hookbox new $id --kind $kind --lang $lang failed:"; sed 's/^/    /' "$log.new"; } >"$fail"
    echo "FAIL $id (hookbox new)"
    return
  fi
  for info in "sh build" "sh test" "text expect"; do
    count="$(block "$dir/README.md" "$info" count)"
    if [[ $count != 1 ]]; then
      echo "$id: README.md's \`$section\` has $count \`\`\`$info blocks, not one" >"$fail"
      echo "FAIL $id (README blocks)"
      return
    fi
  done
  block "$dir/README.md" "sh build" >"$log.build.sh"
  block "$dir/README.md" "sh test" >"$log.test.sh"
  block "$dir/README.md" "text expect" >"$log.expect"
  local t0=$SECONDS code=0
  (cd "$dir" && PATH="$path" CARGO_TARGET_DIR="$target/wasm-guests" \
    timeout 900 bash -euo pipefail "$log.build.sh" </dev/null >"$log.build.out" 2>&1) || code=$?
  local build_s=$((SECONDS - t0))
  if ((code != 0)); then
    {
      echo "$id: the \`\`\`sh build block failed (exit $code):"
      sed 's/^/    $ /' "$log.build.sh"
      tail -n 40 "$log.build.out" | sed 's/^/    /'
    } >"$fail"
    echo "FAIL $id (build exited $code after ${build_s} s)"
    return
  fi
  t0=$SECONDS
  code=0
  (cd "$dir" && PATH="$path" timeout 600 bash -euo pipefail "$log.test.sh" </dev/null \
    >"$log.test.out" 2>"$log.test.err") || code=$?
  local test_s=$((SECONDS - t0)) want problems=() line
  want="$(grep -m1 -v '^[[:space:]]*$' "$log.expect" | sed 's/^exit //')"
  ((code == want)) || problems+=("exit code $code, the README expects $want")
  while IFS= read -r line; do
    [[ -z ${line//[[:space:]]/} ]] && continue
    grep -qF -- "$line" "$log.test.out" || problems+=("stdout does not contain: $line")
  done < <(awk 'seen { print; next } /[^ \t]/ { seen = 1 }' "$log.expect")
  if ((${#problems[@]} > 0)); then
    {
      echo "$id: the \`\`\`sh test block does not match its \`\`\`text expect block:"
      printf '  - %s\n' "${problems[@]}"
      echo "  stdout:"; sed 's/^/    /' "$log.test.out"
      echo "  stderr:"; sed 's/^/    /' "$log.test.err"
    } >"$fail"
    echo "FAIL $id (test: ${problems[0]})"
    return
  fi
  echo "ok   $id (build ${build_s} s, test ${test_s} s)"
}

# The slow ones first (the wasm builds), so they start while the native ones queue.
order=()
for lang in js python-wasm rust sh python node; do
  for l in "${selected[@]}"; do [[ $l == "$lang" ]] && order+=("$lang"); done
done
echo "test-templates: ${#kinds[@]} kinds × ${#order[@]} languages, hookbox = $hookbox, $jobs at a time"
running=0
ids=()
for lang in "${order[@]}"; do
  for kind in "${kinds[@]}"; do
    if ((running >= jobs)); then
      wait -n || true
      running=$((running - 1))
    fi
    run_template "$kind" "$lang" &
    running=$((running + 1))
    ids+=("$kind-$lang")
  done
done
wait

failed=0
for id in "${ids[@]}"; do
  if [[ -f $scratch/$id.fail ]]; then
    failed=$((failed + 1))
    printf '\n' >&2
    cat "$scratch/$id.fail" >&2
  fi
done
((failed == 0)) || die "$failed of ${#ids[@]} templates failed ($((SECONDS - started)) s)"
echo "test-templates: all ${#ids[@]} templates build and pass their tests as generated ($((SECONDS - started)) s)"
