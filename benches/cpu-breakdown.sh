#!/usr/bin/env bash
# Benchmark (not a test): where the client's CPU goes in issue 13's scenario 1 (32 in / 16
# out, streamed, concurrency 64, against the one-thread `mock-server --fast --workers 1`
# pinned to the last CPU, which writes every token as its own write). One unprofiled run
# gives the CPU a request (`/usr/bin/time` user + sys); one run under `perf record` (DWARF
# call graphs, kernel stacks included) gives each part's share of the process's samples, and
# the two together the µs a request of each part. The parts overlap where one calls the
# other (the socket reads include the ACKs they send); the list says which. The reads a
# request of both runs are printed too: the kernel's part follows them (docs/timing.md), and
# a breakdown is only a fair split of the unprofiled figure when the two runs read alike.
# `perf record -N`: without it perf hard-links the binary into its build-id cache, which
# changes the file's status-change time, so the next run of that binary misses the
# remembered executable hash (docs/install.md) and hashes 54 MB again (27 ms, 1.4 µs a
# request at 20,000).
# Usage: benches/cpu-breakdown.sh BIN [REQUESTS]   (needs `perf`)
set -euo pipefail
BIN=$1
N=${2:-20000}
# shellcheck source=benches/servers.sh
source "$(dirname "$0")/servers.sh"
URL=$(start "$WORK/srv.err" "${PIN[@]}" "$BIN" mock-server --port 0 --host 127.0.0.1 --workers 1 --fast)
ARGS=(profile -m mock-model --endpoint-type chat --streaming --isl 32 --osl 16
    --extra-inputs ignore_eos:true --random-seed 1 --ui none -u "$URL" --concurrency 64
    --request-count "$N")
/usr/bin/time -f "%U %S" -o "$WORK/t" "${CLIENT_PIN[@]}" "$BIN" "${ARGS[@]}" --artifact-dir "$WORK/plain" >/dev/null 2>&1
perf record -N -q -F 999 --call-graph dwarf,16384 -o "$WORK/perf.data" -- \
    "${CLIENT_PIN[@]}" "$BIN" "${ARGS[@]}" --artifact-dir "$WORK/profiled" >/dev/null 2>&1
perf report -i "$WORK/perf.data" --children --sort sym -g none --stdio 2>/dev/null >"$WORK/children"
perf report -i "$WORK/perf.data" --no-children --sort comm,dso -g none --stdio 2>/dev/null >"$WORK/comm"
python3 - "$WORK" "$N" <<'PY'
import json, re, sys
w, n = sys.argv[1], int(sys.argv[2])
def reads(run):
    k = r = 0
    for line in open(f"{w}/{run}/inferbench_evidence.jsonl"):
        if line.startswith('{"line":"record"'):
            k += 1
            r += len({f["t_ns"] for f in json.loads(line)["frames"]})
    return r / max(k, 1)
user, system = map(float, open(f"{w}/t").read().split())
us = (user + system) / n * 1e6
children = {}
for line in open(f"{w}/children"):
    m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[[k.]\]\s+(.*\S)\s*$", line)
    if m:
        children.setdefault(m.group(2), float(m.group(1)))
def share(*names):
    return max((children.get(s, 0.0) for s in names), default=0.0)
comm = {}
for line in open(f"{w}/comm"):
    m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\S+)", line)
    if m:
        comm[(m.group(2), m.group(3))] = float(m.group(1))
writer = sum(v for (c, _), v in comm.items() if c == "evidence-writer")
main = sum(v for (c, _), v in comm.items()
           if c not in ("evidence-writer", "resource-sample", "scraper", "tokio-rt-worker"))
kernel = sum(v for (_, d), v in comm.items() if d == "[kernel.kallsyms]")
rows = [
    ("the process, all of it", 100.0),
    ("  kernel, all of it", kernel),
    ("    socket reads (recvmsg), with the ACK each sends", share("__sys_recvmsg")),
    ("    the loopback delivering our ACKs and requests into the server's socket "
     "(softirq in our context; on a real network the server host's work)",
     share("tcp_v4_do_rcv")),
    ("      of which the server socket's ACK processing", share("tcp_ack")),
    ("    sending requests (sendto)", share("__sys_sendto")),
    ("    file writes (evidence, profile_export)", share("ksys_write")),
    ("    epoll_wait", share("do_epoll_wait", "__x64_sys_epoll_wait")),
    ("    page faults", share("exc_page_fault")),
    ("  the evidence writer thread (all of it)", writer),
    ("    output token counting", share("inferbench_client::engine::tokens::count_tokens")),
    ("    evidence line and its writes",
     share("inferbench_artifacts::evidence::EvidenceWriter::write_record")),
    ("    metric fold", share("inferbench_run::fold::Fold::push")),
    ("    profile_export line and its writes",
     share("inferbench_artifacts::run::RecordExportStream::push")),
    ("  end-of-run statistics (sweep, summaries, exports)",
     share("inferbench_run::sink::RecordSink::finish")),
    ("    the sweep (the 14 time-weighted metrics)",
     share("inferbench_metrics::sweepline::sweepline_metrics_column")),
    ("  the main thread: the client's runtime, then the end-of-run statistics", main),
]
print(f"CPU a request (unprofiled run): {us:.1f} µs (user {user / n * 1e6:.1f}, system "
      f"{system / n * 1e6:.1f}); reads a request: {reads('plain'):.1f} unprofiled, "
      f"{reads('profiled'):.1f} profiled")
for name, s in rows:
    print(f"{s:6.1f} %  {s * us / 100:5.1f} µs  {name}")
PY
