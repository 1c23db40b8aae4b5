#!/usr/bin/env bash
# Benchmark (not a test): `gate` with benches/gate-spec.toml over a 100,000-request run,
# wall time and max RSS, next to `metrics` re-scoring the same run. The run is made against
# the simulated server (one token per chunk, each chunk its own write; no simulated latency,
# concurrency 64). Usage: benches/gate.sh [WORKDIR]
# Needs a release build: cargo build --release -p inferbench
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/inferbench}
WORK=${1:-$(mktemp -d)}
N=${N:-100000}
rm -rf "$WORK/run"
mkdir -p "$WORK"
"$BIN" profile --request-count "$N" --concurrency 64 --isl 32 --osl 16 \
    --extra-inputs ignore_eos:true min_tokens:16 \
    --sim-ttft-ms 0 --sim-itl-ms 0 --random-seed 1 --ui none --artifact-dir "$WORK/run" >/dev/null
ls -l "$WORK/run/inferbench_evidence.jsonl"
for i in 1 2 3; do
    code=0
    /usr/bin/time -v "$BIN" gate --spec benches/gate-spec.toml "$WORK/run" >/dev/null \
        2>"$WORK/time-gate.txt" || code=$?
    echo "gate, run $i (exit $code; 0 = PASS):"
    grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time-gate.txt"
done
/usr/bin/time -v "$BIN" metrics "$WORK/run" >/dev/null 2>"$WORK/time-metrics.txt"
echo "metrics:"
grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time-metrics.txt"
