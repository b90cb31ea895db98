#!/usr/bin/env bash
# Checks the Kubernetes manifests without a cluster: `kubectl kustomize` renders deploy/ (the
# kustomization resolves), and kubernetes-validate (PyPI, in a venv under the target folder)
# validates every rendered object against the Kubernetes schemas, rejecting unknown fields.
# Nothing here builds the Dockerfile or talks to a cluster.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
version="${KUBERNETES_VERSION:-1.32.0}"
venv="$target/deploy-check/venv"

command -v kubectl >/dev/null || { echo "deploy/check.sh: kubectl is not installed" >&2; exit 1; }
[[ -x $venv/bin/kubernetes-validate ]] || {
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'kubernetes-validate==1.37.0'
}
rendered="$(mktemp)"
trap 'rm -f "$rendered"' EXIT
kubectl kustomize "$root/deploy" >"$rendered"
"$venv/bin/kubernetes-validate" --strict --quiet -k "$version" "$rendered"
echo "deploy/check.sh: $(grep -c '^kind:' "$rendered") objects render and validate against Kubernetes $version"
