#!/usr/bin/env bash
# Benchmark (not a test): `ledger add` of a 100,000-request run, wall time and max RSS.
# The run is made cheaply against the simulated server (tiny token counts, no simulated
# latency, high concurrency). Usage: benches/ledger-add.sh [WORKDIR]
# Needs a release build: cargo build --release -p inferbench
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/inferbench}
WORK=${1:-$(mktemp -d)}
N=${N:-100000}
rm -rf "$WORK/run" "$WORK/ledger"
mkdir -p "$WORK"
"$BIN" profile --request-count "$N" --concurrency 64 --isl 4 --osl 2 \
    --sim-ttft-ms 0 --sim-itl-ms 0 --random-seed 1 --ui none --artifact-dir "$WORK/run" >/dev/null
ls -l "$WORK/run/inferbench_evidence.jsonl"
"$BIN" ledger init "$WORK/ledger" >/dev/null
/usr/bin/time -v "$BIN" ledger --ledger "$WORK/ledger" add "$WORK/run" \
    2>"$WORK/time.txt"
grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time.txt"
du -sh "$WORK/ledger/packets"/sha256-*/records.jsonl.zst
/usr/bin/time -v "$BIN" ledger --ledger "$WORK/ledger" verify 2>"$WORK/time-verify.txt"
grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time-verify.txt"
