#!/usr/bin/env bash
# Benchmark (not a test): two client builds back to back, alternating, on the scenarios a
# hot-path change moves most (docs/timing.md, issue 13): the client's CPU per request at
# concurrency 64 against a zero-delay one-thread server (scenario 1), the reported TTFT tail at
# concurrency 1 (scenario 6), the schedule lag of Poisson arrivals at 5,000/s (scenario 3), and
# the TTFT error against a 50 ms / 10 ms server at concurrency 64 (scenario 2).
# Alternating A, B, A, B… spreads a shared machine's drift over both builds.
# Usage: benches/ab-client.sh BIN_A BIN_B [ROUNDS]   (the mock-server is BIN_A's)
set -euo pipefail
A=$1
B=$2
ROUNDS=${3:-3}
# shellcheck source=benches/servers.sh
source "$(dirname "$0")/servers.sh"
ONE=$(start "$WORK/one.err" "${PIN[@]}" "$A" mock-server --port 0 --host 127.0.0.1 --workers 1 --fast)
FAST=$(start "$WORK/fast.err" "$A" mock-server --port 0 --host 127.0.0.1 --fast)
ACC=$(start "$WORK/acc.err" "${PIN[@]}" "$A" mock-server --port 0 --host 127.0.0.1 --workers 1 \
    --ttft-ms 50 --itl-ms 10)

common=(-m mock-model --endpoint-type chat --streaming --isl 32 --osl 16
    --extra-inputs ignore_eos:true --random-seed 1 --ui none)
stat() { # stat DIR METRIC FIELD...
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/profile_export_aiperf.json"))[sys.argv[2]]
print(" ".join(f"{f} {d[f]:.3f}" for f in sys.argv[3:]))
PY
}
lag() { # the summary's schedule_lag (ms)
    stat "$1" schedule_lag p50 p99 max
}
ttft_error() { # ttft_error DIR URL: the client's mean TTFT minus the server's own (ms)
    python3 - "$@" <<'PY'
import json, sys, urllib.request
d = json.load(open(sys.argv[1] + "/profile_export_aiperf.json"))["time_to_first_token"]["avg"]
s = json.load(urllib.request.urlopen(sys.argv[2] + "/sim/stats"))["ttft"]["mean_ms"]
print(f"{d - s:+.3f} ms (client {d:.3f}, server {s:.3f})")
PY
}
for r in $(seq "$ROUNDS"); do
    for side in A B; do
        bin=${!side}
        d="$WORK/$side-$r"
        /usr/bin/time -f "%U %S" -o "$WORK/t" "$bin" profile "${common[@]}" -u "$ONE" \
            --concurrency 64 --request-count 20000 --artifact-dir "$d-c64" >/dev/null 2>&1
        read -r u s <"$WORK/t"
        cpu=$(python3 -c "print(f'{($u + $s) / 20000 * 1e6:.1f}')")
        "$bin" profile "${common[@]}" -u "$ONE" --concurrency 1 --request-count 3000 \
            --warmup-request-count 100 --artifact-dir "$d-c1" >/dev/null 2>&1
        "$bin" profile "${common[@]}" -u "$FAST" --concurrency 64 --request-count 1 \
            --request-rate 5000 --arrival-pattern poisson --benchmark-duration 5 \
            --artifact-dir "$d-poisson" >/dev/null 2>&1
        python3 -c "import urllib.request as u; u.urlopen(u.Request('$ACC/sim/reset', method='POST'))"
        "$bin" profile "${common[@]}" -u "$ACC" --concurrency 64 --request-count 640 \
            --warmup-request-count 64 --artifact-dir "$d-acc" >/dev/null 2>&1
        echo "$side round $r: c64 ${cpu} µs CPU/request; c1 TTFT $(stat "$d-c1" time_to_first_token p50 p99 max); poisson lag $(lag "$d-poisson"); TTFT error $(ttft_error "$d-acc" "$ACC")"
    done
done
