#!/usr/bin/env bash
# Benchmark (not a test): how exactly the simulated server keeps its configured TTFT and ITL,
# by its own count (`/sim/stats`), and what that costs it in CPU. A standalone mock-server
# (TTFT 20 ms, ITL 5 ms, 16 output tokens per streamed chat request) is driven by
# `inferbench profile --url` at concurrency 64; the server's mean TTFT and ITL are read from
# /sim/stats (warmup included: they do not depend on the connection), its CPU time from
# /proc/PID/stat (utime + stime, clock ticks) before and after the profiled requests.
# Usage: benches/sim-pacing.sh [WORKDIR]   (BIN=… for another build; N=… requests)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/debug/inferbench}
WORK=${1:-$(mktemp -d)}
N=${N:-6400}
TTFT=${TTFT:-20}
ITL=${ITL:-5}
CONC=${CONC:-64}
mkdir -p "$WORK"
rm -rf "$WORK/run"

"$BIN" mock-server --port 0 --host 127.0.0.1 --ttft-ms "$TTFT" --itl-ms "$ITL" \
    2>"$WORK/server.err" >/dev/null &
PID=$!
trap 'kill -INT $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$WORK/server.err" 2>/dev/null && break
    sleep 0.1
done
URL=$(grep -o 'http://[0-9.:]*' "$WORK/server.err" | head -1)
[ -n "$URL" ] || { echo "mock-server did not start:"; cat "$WORK/server.err"; exit 1; }

ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
HZ=$(getconf CLK_TCK)
cpu0=$(ticks)
t0=$(date +%s.%N)
"$BIN" profile -m mock-model -u "$URL" --endpoint-type chat --streaming \
    --isl 32 --osl 16 --extra-inputs ignore_eos:true min_tokens:16 --random-seed 1 \
    --ui none --concurrency "$CONC" --request-count "$N" --warmup-request-count "$CONC" \
    --artifact-dir "$WORK/run" >/dev/null
t1=$(date +%s.%N)
cpu1=$(ticks)
STATS=$(curl -s "$URL/sim/stats")
echo "== mock-server --ttft-ms $TTFT --itl-ms $ITL; concurrency $CONC, $N requests (+$CONC warmup), 16 tokens each"
echo "$STATS" | python3 -c '
import json, sys
s = json.load(sys.stdin)
for key, cfg in (("ttft", "ttft_cfg_ms"), ("itl", "itl_cfg_ms")):
    t, c = s[key], s[cfg]
    print("server %-4s mean %.4f ms over %d (configured %g ms: error %+.4f ms), max %.3f ms"
          % (key.upper(), t["mean_ms"], t["count"], c, t["mean_ms"] - c, t["max_ms"]))
'
awk -v c0="$cpu0" -v c1="$cpu1" -v hz="$HZ" -v t0="$t0" -v t1="$t1" -v n="$((N + CONC))" 'BEGIN {
    cpu = (c1 - c0) / hz; wall = t1 - t0;
    printf "server CPU %.2f s over %.2f s wall (%.1f %% of one core), %.0f µs per request\n", cpu, wall, 100 * cpu / wall, 1e6 * cpu / n
}'
