#!/usr/bin/env bash
# Validates the golden Kubernetes manifests of `inferbench kube render`
# (crates/inferbench-kube/tests/golden/, compared with the renderer by
# `cargo test -p inferbench-kube`) against the API schemas, strictly (unknown fields are
# errors), for Kubernetes 1.33 (the minimum: per-index backoff GA) and the newest version
# kubernetes-validate knows. Warnings (an unknown kind) fail too.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/kube-venv
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'kubernetes-validate==1.37.0'
fi
newest=$("$venv/bin/python" -c 'import kubernetes_validate.utils as u; print(u.latest_version())')
status=0
for f in crates/inferbench-kube/tests/golden/*.yaml; do
  for v in 1.33.0 "$newest"; do
    out=$("$venv/bin/kubernetes-validate" --strict -k "$v" "$f" 2>&1) || status=1
    echo "$out"
    if grep -qiE 'warn|error' <<<"$out"; then status=1; fi
  done
done
if [ "$status" -ne 0 ]; then
  echo "kube.sh: manifest validation FAILED"
  exit 1
fi
echo "kube.sh: every golden manifest is valid for Kubernetes 1.33.0 and $newest"
