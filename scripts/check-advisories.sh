#!/usr/bin/env bash
# Fails when Cargo.lock holds a wasmtime, wasmtime-* or cranelift-* version with a published
# security advisory that SECURITY.md does not answer (a heading naming the advisory's id or one of
# its GHSA aliases, under "Advisories of the pinned wasmtime", saying what hookbox does about it).
#
# Advisories come from the committed snapshot scripts/advisories.tsv (CI reaches the package
# registries only, not GitHub), and also from `cargo audit` when it is installed and its advisory
# database can be fetched; the output says which data was used.
#
# Usage: scripts/check-advisories.sh [--lock FILE] [--security FILE] [--snapshot FILE] [--offline]
#        scripts/check-advisories.sh --self-test
# --offline skips `cargo audit` even when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ ${1:-} == --self-test ]]; then
  # The check against made-up inputs: an old wasmtime must be reported until answered, and a
  # patched one must pass.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  lock() {
    printf '[[package]]\nname = "%s"\nversion = "%s"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\n\n' "$@"
  }
  { lock wasmtime 46.0.1; lock cranelift-codegen 0.73.0; lock serde 1.0.0; } >"$tmp/old.lock"
  printf '# Security\n\n## Advisories of the pinned wasmtime\n\n### RUSTSEC-2026-0223 (GHSA-2hw9-mc66-jc2q)\nanswered\n\n### GHSA-2674-w29h-wqvj\nanswered\n' >"$tmp/partial.md"
  { lock wasmtime 48.0.9; lock wasmtime-wasi 48.0.9; } >"$tmp/patched.lock"
  # An advisory with no known patched range affects every version.
  printf 'GHSA-test-0000-0000\tGHSA-test-0000-0000\twasmtime\t-\t-\t-\ttest\n' >"$tmp/open.tsv"
  fails=0
  expect() { # expect <status> <must-contain> <args...>
    local want=$1 needle=$2 got=0 out
    shift 2
    out=$("$0" --offline "$@" 2>&1) || got=$?
    if [[ $got != "$want" || $out != *"$needle"* ]]; then
      echo "self-test: \`$*\` exited $got (want $want) without \"$needle\":"
      echo "$out"
      fails=1
    fi
  }
  expect 1 "RUSTSEC-2026-0222" --lock "$tmp/old.lock" --security "$tmp/partial.md"
  expect 1 "cranelift-codegen 0.73.0: RUSTSEC-2021-0067" --lock "$tmp/old.lock" --security "$tmp/partial.md"
  expect 0 "no unanswered advisory" --lock "$tmp/patched.lock" --security "$tmp/partial.md"
  expect 1 "GHSA-test-0000-0000" --lock "$tmp/patched.lock" --security "$tmp/partial.md" --snapshot "$tmp/open.tsv"
  # An answered advisory passes (RUSTSEC-2026-0223 above is answered and not reported).
  out=$("$0" --offline --lock "$tmp/old.lock" --security "$tmp/partial.md" 2>&1 || true)
  if [[ $out == *"unanswered: wasmtime 46.0.1: RUSTSEC-2026-0223"* ]]; then
    echo "self-test: an answered advisory was reported"; fails=1
  fi
  if ((fails)); then exit 1; fi
  echo "check-advisories self-test: ok"
  exit 0
fi

lock=Cargo.lock security=SECURITY.md snapshot=scripts/advisories.tsv offline=0
while (($#)); do
  case $1 in
    --lock) lock=$2; shift 2 ;;
    --security) security=$2; shift 2 ;;
    --snapshot) snapshot=$2; shift 2 ;;
    --offline) offline=1; shift ;;
    *) echo "check-advisories: unknown argument $1" >&2; exit 2 ;;
  esac
done

live=""
if ((offline)); then
  echo "check-advisories: live data not used (--offline)"
elif ! cargo audit --version >/dev/null 2>&1; then
  echo "check-advisories: live data unavailable (cargo-audit is not installed); using the committed snapshot only"
else
  live=$(mktemp)
  trap 'rm -f "$live"' EXIT
  # cargo audit exits 1 when it finds vulnerabilities: read its JSON whatever the status, and
  # treat no JSON at all (no database: GitHub unreachable) as "no live data".
  timeout 120 cargo audit --json --file "$lock" >"$live" 2>/dev/null || true
  if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$live" 2>/dev/null; then
    echo "check-advisories: live data from cargo audit ($(cargo audit --version)) used with the snapshot"
  else
    echo "check-advisories: live data unavailable (cargo audit could not fetch or read its advisory database); using the committed snapshot only"
    live=""
  fi
fi

python3 - "$lock" "$security" "$snapshot" "$live" <<'PY'
import json
import re
import sys

lock_path, security_path, snapshot_path, live_path = sys.argv[1:5]
WATCHED = re.compile(r"^(wasmtime|wasmtime-.*|cranelift-.*)$")


def version(text):
    core = text.split("+")[0].split("-")[0]
    return tuple(int(p) for p in core.split("."))


def holds(req, v):
    """One comparison of a RustSec range: '>= 1.2.3', '< 2.0.0', '= 1.0.0', '^1.2'."""
    m = re.fullmatch(r"\s*(>=|<=|>|<|=|\^)?\s*([0-9][0-9.]*)\s*", req)
    if not m:
        raise SystemExit(f"check-advisories: cannot read the version requirement {req!r}")
    op, bound = m.group(1) or "^", version(m.group(2))
    bound = bound + (0,) * (3 - len(bound))
    if op == ">=":
        return v >= bound
    if op == ">":
        return v > bound
    if op == "<=":
        return v <= bound
    if op == "<":
        return v < bound
    if op == "=":
        return v == bound
    major = next((i for i, p in enumerate(bound) if p != 0), 2)
    upper = bound[:major] + (bound[major] + 1,) + (0,) * (2 - major)
    return bound <= v < upper


def in_ranges(ranges, v):
    return any(all(holds(req, v) for req in r.split(",")) for r in ranges)


# Cargo.lock: every watched package and version.
locked = []
name = None
for line in open(lock_path, encoding="utf-8"):
    m = re.match(r'^(name|version) = "([^"]+)"', line)
    if not m:
        continue
    if m.group(1) == "name":
        name = m.group(2)
    elif name and WATCHED.match(name):
        locked.append((name, m.group(2)))
        name = None

# The snapshot, then live findings.
advisories = []
for line in open(snapshot_path, encoding="utf-8"):
    if not line.strip() or line.startswith("#"):
        continue
    cols = line.rstrip("\n").split("\t")
    if len(cols) != 7:
        raise SystemExit(f"check-advisories: {snapshot_path}: expected 7 columns: {line!r}")
    ident, aliases, crate, patched, unaffected, _published, title = cols
    split = lambda s: [] if s == "-" else [r.strip() for r in s.split(";")]
    advisories.append({
        "id": ident,
        "aliases": [] if aliases == "-" else aliases.split(","),
        "crate": crate,
        "patched": split(patched),
        "unaffected": split(unaffected),
        "title": title,
    })
live_found = set()
if live_path:
    for vuln in json.load(open(live_path)).get("vulnerabilities", {}).get("list", []):
        adv, pkg = vuln.get("advisory", {}), vuln.get("package", {})
        if WATCHED.match(pkg.get("name", "")):
            live_found.add((pkg["name"], pkg.get("version", "?"), adv.get("id", "?"),
                            tuple(a for a in adv.get("aliases", []) if a.startswith("GHSA")),
                            adv.get("title", "")))

# SECURITY.md: the headings of the section that answers advisories.
SECTION = "Advisories of the pinned wasmtime"
headings, level = [], None
for line in open(security_path, encoding="utf-8"):
    if not line.startswith("#"):
        continue
    depth = len(line) - len(line.lstrip("#"))
    if level is None:
        if SECTION in line:
            level = depth
    elif depth <= level:
        break
    else:
        headings.append(line)
if level is None:
    print(f"check-advisories: {security_path} has no \"{SECTION}\" section")


def answered(ids):
    return any(i in h for i in ids for h in headings)


affected = []
for crate, ver in locked:
    v = version(ver)
    for a in advisories:
        if a["crate"] != crate:
            continue
        if in_ranges(a["patched"], v) or in_ranges(a["unaffected"], v):
            continue
        affected.append((crate, ver, a["id"], tuple(a["aliases"]), a["title"]))
known = {(c, v, i) for c, v, i, _, _ in affected}
for crate, ver, ident, aliases, title in sorted(live_found):
    if (crate, ver, ident) not in known and not any((crate, ver, g) in known for g in aliases):
        affected.append((crate, ver, ident, aliases, title + " (from cargo audit)"))

answers, missing = [], []
for crate, ver, ident, aliases, title in affected:
    (answers if answered((ident,) + aliases) else missing).append(
        f"{crate} {ver}: {ident}" + (f" ({', '.join(a for a in aliases if a != ident)})" if [a for a in aliases if a != ident] else "") + f" — {title}")

watched = ", ".join(sorted({f"{c} {v}" for c, v in locked if c == "wasmtime" or c == "wasmtime-wasi"}))
print(f"check-advisories: {len(locked)} wasmtime/cranelift packages in {lock_path} ({watched or 'no wasmtime'}), "
      f"{len(advisories)} advisories in {snapshot_path}")
for a in answers:
    print(f"  answered in {security_path}: {a}")
if missing:
    for m in missing:
        print(f"  unanswered: {m}")
    print(f"check-advisories: {len(missing)} advisory(ies) affect the locked versions and {security_path} does not answer them: "
          f"add a section per advisory under \"Advisories of the pinned wasmtime\" (a heading with its id: what it is, whether it reaches hookbox, what we do), or bump the crate")
    sys.exit(1)
print(f"check-advisories: ok, no unanswered advisory ({len(answers)} answered)")
PY
