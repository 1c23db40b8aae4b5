#!/usr/bin/env bash
# The release binary of one commit, for the A/B scripts (ab-cpu.sh, ab-client.sh): built in
# a worktree of its own with a target directory of its own, and copied to OUT.
#
# Why its own target directory: a worktree that shares the main checkout's target/ writes
# the workspace crates under the same artifact names, and cargo's fingerprints (whose
# dep-info paths are relative) then call the main checkout's stale artifacts fresh: the next
# `cargo build` there silently links the other commit's code. The price is a full build
# (6.5 minutes on this two-core machine); the directory is kept under target/ab/, so the
# dependencies are built once.
# Usage: benches/build-rev.sh REV OUT   (e.g. benches/build-rev.sh HEAD~1 /tmp/ib-before)
set -euo pipefail
REV=$1
OUT=$2
ROOT=$(git rev-parse --show-toplevel)
SHA=$(git -C "$ROOT" rev-parse --verify "$REV^{commit}")
WT=$(mktemp -d)
trap 'git -C "$ROOT" worktree remove --force "$WT" >/dev/null 2>&1 || true; rm -rf "$WT"' EXIT
git -C "$ROOT" worktree add --detach -q "$WT" "$SHA"
CARGO_TARGET_DIR="$ROOT/target/ab" cargo build --release -p inferbench --manifest-path "$WT/Cargo.toml"
cp "$ROOT/target/ab/release/inferbench" "$OUT"
echo "$OUT: inferbench at $SHA"
