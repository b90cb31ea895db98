#!/usr/bin/env bash
# Runs the "Build and run" section of every guest README under guest-examples/, exactly as
# written, so the commands a plugin author copies cannot rot:
#   - the ```sh build block, then the ```sh run block, each with bash -euo pipefail from the
#     guest's own folder, stdin from /dev/null;
#   - `hookbox` on PATH is ${HOOKBOX_BIN:-<target>/debug/hookbox} (build it first: `cargo build`);
#   - CARGO_TARGET_DIR=<target>/wasm-guests for the guest builds (shared with
#     crates/test-artifacts and the other scripts, so a second run is incremental), which the
#     README commands honour (`${CARGO_TARGET_DIR:-../target}/…`);
#   - componentize-py from <target>/polyglot/venv/bin (scripts/setup-polyglot.sh) is on PATH;
#   - the run's exit code and stdout are checked against the ```text expect block: its first
#     line is `exit N`; every other line is a substring stdout must contain, `stderr: TEXT` a
#     substring stderr must contain, or `(no output)` (stdout must be empty).
# <target> is ${CARGO_TARGET_DIR:-<repo>/target}. Every README.md in a guest folder must have the
# section (a guest without one fails, unless listed in `pending` below), each of the three blocks
# exactly once.
#
# Usage: scripts/test-guest-readmes.sh [GUEST_FOLDER...]   (default: every guest README)
# The JavaScript and Python guests need their tooling (scripts/setup-polyglot.sh); without it
# this script fails, unless HOOKBOX_SKIP_POLYGLOT=1, which skips those guests. Guests run side by
# side, HOOKBOX_README_JOBS at a time (default 3: the two polyglot builds are mostly single-threaded
# and take ~30 s each; the Rust guests share one cargo lock anyway).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
hookbox="$(realpath -m "${HOOKBOX_BIN:-$target/debug/hookbox}")"
venv_bin="$target/polyglot/venv/bin"
jobs="${HOOKBOX_README_JOBS:-3}"
section="## Build and run"
# Guest READMEs that do not have the section yet: skipped, with a note. Empty it as they get one.
pending=()
started=$SECONDS

die() { echo "test-guest-readmes: $*" >&2; exit 1; }

[[ -x $hookbox ]] || die "no hookbox binary at $hookbox: run \`cargo build\` first (or set HOOKBOX_BIN)"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "HOOKBOX_README_JOBS must be a positive number, not '$jobs'"

# The guest READMEs: guest-examples/<guest>/README.md and guest-examples/<language>/<guest>/README.md.
readmes=()
if (($# > 0)); then
  for dir in "$@"; do
    dir="$(realpath -m "$dir")"
    [[ -f $dir/README.md ]] || die "$dir has no README.md"
    readmes+=("${dir#"$root"/}/README.md")
  done
else
  while IFS= read -r readme; do
    readmes+=("${readme#./}")
  done < <(cd "$root" && find ./guest-examples -mindepth 2 -maxdepth 3 \
    \( -name node_modules -o -name target -o -name dist -o -name .venv \) -prune \
    -o -name README.md -print | sort)
fi
((${#readmes[@]} > 0)) || die "no guest README found under $root/guest-examples"

# What a guest needs beyond cargo: the JavaScript and Python toolchains.
polyglot_of() {
  case "$1" in
    guest-examples/js/*) echo js ;;
    guest-examples/js-quickjs/*) echo quickjs ;;
    guest-examples/python/*) echo python ;;
    *) echo "" ;;
  esac
}
missing_tooling() {
  case "$1" in
    js)
      command -v node >/dev/null || { echo "node is not on PATH"; return; }
      [[ -f $root/guest-examples/js/node_modules/@bytecodealliance/componentize-js/package.json \
        && -f $root/guest-examples/js/node_modules/componentize-qjs/package.json ]] \
        || echo "componentize-js or componentize-qjs is not installed in guest-examples/js/node_modules"
      ;;
    quickjs)
      command -v clang-19 >/dev/null || command -v clang >/dev/null || [[ -n ${CC_QUICKJS:-} ]] \
        || { echo "no clang for QuickJS's C (apt-get install clang-19 wasi-libc)"; return; }
      [[ -f /usr/include/wasm32-wasi/stdlib.h || -n ${WASI_SYSROOT:-} ]] \
        || echo "wasi-libc's headers are missing (apt-get install wasi-libc)"
      ;;
    python)
      [[ -x $venv_bin/componentize-py ]] || command -v componentize-py >/dev/null \
        || echo "componentize-py is neither in $venv_bin nor on PATH"
      ;;
  esac
}

# Prints the body of the fenced block whose info string is $2, inside the README's section.
# With $3 = count, prints how many such blocks the section has instead.
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
# Only `hookbox` is put first on PATH, not the rest of target/debug.
mkdir "$scratch/bin"
ln -s "$hookbox" "$scratch/bin/hookbox"
path="$scratch/bin:$PATH"
if [[ -d $venv_bin ]]; then path="$scratch/bin:$venv_bin:$PATH"; fi

# Checks one README's section and runs it. Writes its verdict line to stdout and, on failure,
# the details to $scratch/<n>.fail.
run_guest() {
  local n="$1" readme="$2" dir log fail info count
  dir="$root/$(dirname "$readme")"
  log="$scratch/$n"
  fail="$scratch/$n.fail"

  if ! grep -qxF "$section" "$root/$readme"; then
    echo "$readme has no \`$section\` section: every guest README says how to build and run" \
      "its guest (see guest-examples/README.md)" >"$fail"
    echo "FAIL $readme (no \`$section\` section)"
    return
  fi
  for info in "sh build" "sh run" "text expect"; do
    count="$(block "$root/$readme" "$info" count)"
    if [[ $count != 1 ]]; then
      echo "$readme: its \`$section\` section has $count \`\`\`$info blocks, not exactly one" >"$fail"
      echo "FAIL $readme (\`\`\`$info blocks: $count)"
      return
    fi
  done
  block "$root/$readme" "sh build" >"$log.build.sh"
  block "$root/$readme" "sh run" >"$log.run.sh"
  block "$root/$readme" "text expect" >"$log.expect"

  local want_exit
  want_exit="$(grep -m1 -v '^[[:space:]]*$' "$log.expect" || true)"
  if [[ ! $want_exit =~ ^exit\ ([0-9]+)$ ]]; then
    echo "$readme: the \`\`\`text expect block must start with \`exit N\`, not '$want_exit'" >"$fail"
    echo "FAIL $readme (bad \`\`\`text expect block)"
    return
  fi
  want_exit="${BASH_REMATCH[1]}"

  local t0 build_s run_s code=0
  t0=$SECONDS
  (cd "$dir" && PATH="$path" CARGO_TARGET_DIR="$target/wasm-guests" \
    timeout 900 bash -euo pipefail "$log.build.sh" </dev/null >"$log.build.out" 2>&1) || code=$?
  build_s=$((SECONDS - t0))
  if ((code != 0)); then
    {
      echo "$readme: the \`\`\`sh build block failed (exit $code) in $dir:"
      sed 's/^/    $ /' "$log.build.sh"
      echo "  its output (last 40 lines):"
      tail -n 40 "$log.build.out" | sed 's/^/    /'
    } >"$fail"
    echo "FAIL $readme (build exited $code after ${build_s} s)"
    return
  fi

  t0=$SECONDS
  code=0
  (cd "$dir" && PATH="$path" CARGO_TARGET_DIR="$target/wasm-guests" \
    timeout 300 bash -euo pipefail "$log.run.sh" </dev/null >"$log.run.out" 2>"$log.run.err") || code=$?
  run_s=$((SECONDS - t0))

  local problems=() line
  ((code == want_exit)) || problems+=("exit code $code, the README expects $want_exit")
  while IFS= read -r line; do
    [[ -z ${line//[[:space:]]/} ]] && continue
    if [[ $line == "(no output)" ]]; then
      [[ -s $log.run.out ]] && problems+=("stdout is not empty, the README expects no output")
    elif [[ $line == "stderr: "* ]]; then
      grep -qF -- "${line#stderr: }" "$log.run.err" \
        || problems+=("stderr does not contain: ${line#stderr: }")
    elif ! grep -qF -- "$line" "$log.run.out"; then
      problems+=("stdout does not contain: $line")
    fi
  done < <(awk 'seen { print; next } /[^ \t]/ { seen = 1 }' "$log.expect")

  if ((${#problems[@]} > 0)); then
    {
      echo "$readme: the \`\`\`sh run block's output does not match its \`\`\`text expect block:"
      printf '  - %s\n' "${problems[@]}"
      echo "  ran in $dir:"
      sed 's/^/    $ /' "$log.run.sh"
      echo "  stdout:"
      sed 's/^/    /' "$log.run.out"
      echo "  stderr:"
      sed 's/^/    /' "$log.run.err"
    } >"$fail"
    echo "FAIL $readme (run: ${problems[0]})"
    return
  fi
  echo "ok   $readme (build ${build_s} s, run ${run_s} s, exit $code)"
}

# Polyglot tooling first: a missing toolchain fails before anything is built.
selected=()
skipped=0
for readme in "${readmes[@]}"; do
  if [[ " ${pending[*]} " == *" $readme "* ]] && ! grep -qxF "$section" "$root/$readme"; then
    echo "skip $readme (no \`$section\` section yet: listed in \`pending\` in $0)"
    skipped=$((skipped + 1))
    continue
  fi
  lang="$(polyglot_of "$readme")"
  if [[ -n $lang ]]; then
    if [[ ${HOOKBOX_SKIP_POLYGLOT:-} == 1 ]]; then
      echo "skip $readme (HOOKBOX_SKIP_POLYGLOT=1)"
      skipped=$((skipped + 1))
      continue
    fi
    problem="$(missing_tooling "$lang")"
    [[ -z $problem ]] || die "$readme needs the $lang guest tooling: $problem.
  fix: run scripts/setup-polyglot.sh (or set HOOKBOX_SKIP_POLYGLOT=1 to skip the JavaScript and Python guests)"
  fi
  selected+=("$readme")
done

# Polyglot guests first: they are the slowest, so they start while the Rust ones queue.
ordered=()
for readme in "${selected[@]}"; do
  if [[ -n $(polyglot_of "$readme") ]]; then ordered+=("$readme"); fi
done
for readme in "${selected[@]}"; do
  if [[ -z $(polyglot_of "$readme") ]]; then ordered+=("$readme"); fi
done

echo "test-guest-readmes: ${#ordered[@]} guest READMEs, hookbox = $hookbox, $jobs at a time"
running=0
for i in "${!ordered[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_guest "$i" "${ordered[$i]}" &
  running=$((running + 1))
done
wait

failed=0
for i in "${!ordered[@]}"; do
  if [[ -f $scratch/$i.fail ]]; then
    failed=$((failed + 1))
    printf '\n' >&2
    cat "$scratch/$i.fail" >&2
  fi
done
elapsed=$((SECONDS - started))
if ((failed > 0)); then
  echo >&2
  die "$failed of ${#ordered[@]} guest READMEs failed (${elapsed} s)"
fi
echo "test-guest-readmes: all ${#ordered[@]} guest READMEs build and run as written" \
  "($skipped skipped, ${elapsed} s)"
