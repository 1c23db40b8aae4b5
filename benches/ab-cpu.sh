#!/usr/bin/env bash
# Benchmark (not a test): the client's CPU per request of two builds, scenario 1 only (issue
# 13: 32 in / 16 out, streamed, concurrency 64, against the one-thread `mock-server --fast
# --workers 1` pinned to the last CPU). Each round runs A then B at 20,000 requests and at
# 200 (the start-up); the medians give the CPU a request over the whole process and at the
# margin, (median CPU at 20,000 − median CPU at 200) / 19,800. `/usr/bin/time` user + sys.
# Also printed, for the 20,000-request runs: the user and system medians, and the reads a
# request (the distinct frame instants of a record in the evidence, averaged): each read
# costs a `recvmsg` and the ACK it sends, and how many there are depends on how the client's
# reads and the server's writes fall, which varies from run to run and from day to day; a
# change in system time that comes with a change in reads is not the build's doing. Last, the
# difference B − A at equal reads a request, from one least-squares fit of both builds' runs.
# Usage: benches/ab-cpu.sh BIN_A BIN_B [ROUNDS]   (the mock-server is BIN_A's)
set -euo pipefail
A=$1
B=$2
ROUNDS=${3:-6}
# shellcheck source=benches/servers.sh
source "$(dirname "$0")/servers.sh"
URL=$(start "$WORK/srv.err" "${PIN[@]}" "$A" mock-server --port 0 --host 127.0.0.1 --workers 1 --fast)
run() { # run SIDE N ROUND: one run, its "user sys" appended to WORK/SIDE-N
    local bin=${!1}
    /usr/bin/time -f "%U %S" -o "$WORK/t" "${CLIENT_PIN[@]}" "$bin" profile -m mock-model --endpoint-type chat \
        --streaming --isl 32 --osl 16 --extra-inputs ignore_eos:true --random-seed 1 --ui none \
        -u "$URL" --concurrency 64 --request-count "$2" --artifact-dir "$WORK/run-$1-$2-$3" \
        >/dev/null 2>&1
    cat "$WORK/t" >>"$WORK/$1-$2"
    if [ "$2" = 20000 ]; then
        python3 - "$WORK/run-$1-$2-$3/inferbench_evidence.jsonl" >>"$WORK/$1-reads" <<'PY'
import json, sys
n = reads = 0
for line in open(sys.argv[1]):
    if line.startswith('{"line":"record"'):
        n += 1
        reads += len({f["t_ns"] for f in json.loads(line)["frames"]})
print(reads / max(n, 1))
PY
    fi
    rm -rf "$WORK/run-$1-$2-$3"
}
for r in $(seq "$ROUNDS"); do
    for side in A B; do
        run "$side" 20000 "$r"
        run "$side" 200 "$r"
    done
done
python3 - "$WORK" <<'PY'
import statistics, sys
w = sys.argv[1]
def cpu(side, n):
    return [sum(map(float, l.split())) for l in open(f"{w}/{side}-{n}") if l.strip()]
def col(side, n, k):
    return [float(l.split()[k]) for l in open(f"{w}/{side}-{n}") if l.strip()]
for side in "AB":
    big, small = cpu(side, 20000), cpu(side, 200)
    user = statistics.median(col(side, 20000, 0)) / 20000 * 1e6
    system = statistics.median(col(side, 20000, 1)) / 20000 * 1e6
    reads = [float(l) for l in open(f"{w}/{side}-reads") if l.strip()]
    whole = [c / 20000 * 1e6 for c in big]
    margin = (statistics.median(big) - statistics.median(small)) / 19800 * 1e6
    print(f"{side}: CPU a request over the process " + ", ".join(f"{x:.1f}" for x in whole)
          + f" µs (median {statistics.median(whole):.1f}); start-up median "
          f"{statistics.median(small):.3f} s; at the margin {margin:.1f} µs; user {user:.1f} "
          f"and system {system:.1f} µs a request (medians); reads a request "
          + ", ".join(f"{x:.1f}" for x in reads))

# Both builds' runs in one least-squares fit, CPU = a + b·reads + d·[build B], one slope for
# both: d is B − A at equal reads a request, with its standard error.
x, y, z = [], [], []
for k, side in enumerate("AB"):
    big = [c / 20000 * 1e6 for c in cpu(side, 20000)]
    reads = [float(l) for l in open(f"{w}/{side}-reads") if l.strip()]
    x += reads
    y += big
    z += [k] * len(big)
n = len(x)
if n > 3 and len(set(x)) > 1:
    mx, my, mz = (sum(v) / n for v in (x, y, z))
    sxx = sum((a - mx) ** 2 for a in x)
    szz = sum((c - mz) ** 2 for c in z)
    sxz = sum((a - mx) * (c - mz) for a, c in zip(x, z))
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    szy = sum((c - mz) * (b - my) for c, b in zip(z, y))
    det = sxx * szz - sxz ** 2
    if det > 0:
        slope = (szz * sxy - sxz * szy) / det
        d = (sxx * szy - sxz * sxy) / det
        a0 = my - slope * mx - d * mz
        res = [b - (a0 + slope * a + d * c) for a, b, c in zip(x, y, z)]
        sd = (sum(r * r for r in res) / (n - 3)) ** 0.5
        print(f"at equal reads a request: B − A = {d:+.1f} ± {sd * (sxx / det) ** 0.5:.1f} µs "
              f"(standard error); {slope:.1f} µs a read")
        # The fit compares the builds where their reads meet; when the ranges do not meet,
        # "equal reads" is an extrapolation along a slope fitted within each build's spread.
        ra = [a for a, c in zip(x, z) if c == 0]
        rb = [a for a, c in zip(x, z) if c == 1]
        lo, hi = max(min(ra), min(rb)), min(max(ra), max(rb))
        if lo > hi:
            print(f"warning: the builds' reads a request do not overlap (A {min(ra):.1f} to "
                  f"{max(ra):.1f}, B {min(rb):.1f} to {max(rb):.1f}): the figure above is an "
                  "extrapolation; compare the medians and rerun")
PY
