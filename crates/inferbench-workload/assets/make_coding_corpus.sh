#!/bin/sh
# Regenerates coding.txt, the `--prompt-corpus coding` text, from this repository.
#
#   sh crates/inferbench-workload/assets/make_coding_corpus.sh
#
# The corpus is ours, not AIPerf's: for each crate (in name order) its Cargo.toml and whole
# Rust sources from src/ (in path order, a file taken only while the crate stays within
# CRATE_BUDGET bytes), each after a `// file: PATH` line; after each crate one of the short
# samples below (shell output, a JSON document, a Python-style traceback, a unified diff),
# written for this corpus; then the workspace Cargo.toml and two docs. Everything is made
# ASCII (common symbols spelled out, the rest dropped) so that a window of tokens never
# splits a character. The output depends only on the files read: rerun it after the sources
# change, and update the hash the tests expect if it is pinned anywhere.
set -eu

export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$here/coding.txt"
CRATE_BUDGET=24000
DOCS="docs/workload.md docs/timing.md"

# Spells out the symbols our sources use, then drops any other non-ASCII byte and any
# control character but tab and newline.
ascii() {
    sed -e 's/…/.../g' -e 's/−/-/g' -e 's/→/->/g' -e 's/←/<-/g' -e 's/⇒/=>/g' \
        -e 's/·/*/g' -e 's/─/-/g' -e 's/━/=/g' -e 's/│/|/g' -e 's/≥/>=/g' -e 's/≤/<=/g' \
        -e 's/≠/!=/g' -e 's/≈/~/g' -e 's/±/+-/g' -e 's/✔/yes/g' -e 's/—/--/g' \
        -e 's/–/-/g' -e 's/×/x/g' -e 's/÷/\//g' -e 's/§/S/g' -e 's/µ/u/g' -e 's/²/^2/g' \
        -e 's/√/sqrt/g' -e 's/∞/inf/g' -e 's/é/e/g' -e 's/ü/u/g' -e 's/ß/ss/g' \
        -e 's/⌊/floor(/g' -e 's/⌋/)/g' -e 's/Σ/sum/g' -e 's/α/alpha/g' |
        tr -cd '\11\12\40-\176'
}

emit_file() {
    printf '// file: %s\n' "$1"
    ascii <"$root/$1"
    printf '\n'
}

sample() {
    case "$1" in
    0)
        cat <<'EOF'
// sample: shell session
$ cargo test -p inferbench-workload --test corpora
   Compiling inferbench-workload v0.1.0 (/home/dev/inferbench/crates/inferbench-workload)
    Finished `test` profile [optimized + debuginfo] target(s) in 14.83s
     Running tests/corpora.rs (target/debug/deps/corpora-5be1f0a9c2d4e7b3)

running 3 tests
test coding_prompts_are_windows ... ok
test random_prompts_have_exact_length ... ok
test same_seed_same_workload ... FAILED

failures:

---- same_seed_same_workload stdout ----
thread 'same_seed_same_workload' panicked at tests/corpora.rs:88:5:
assertion `left == right` failed
  left: 41
 right: 40

failures:
    same_seed_same_workload

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.41s

error: test failed, to rerun pass `-p inferbench-workload --test corpora`
$ echo $?
101
$ ls -la target/release
total 48216
drwxr-xr-x  7 dev dev     4096 Mar  3 10:14 .
drwxr-xr-x  5 dev dev     4096 Mar  3 09:58 ..
-rw-r--r--  1 dev dev        0 Mar  3 09:58 .cargo-lock
drwxr-xr-x 41 dev dev     4096 Mar  3 10:02 build
drwxr-xr-x  2 dev dev    20480 Mar  3 10:14 deps
drwxr-xr-x  2 dev dev     4096 Mar  3 09:58 examples
drwxr-xr-x  3 dev dev     4096 Mar  3 10:03 incremental
-rwxr-xr-x  2 dev dev 49213440 Mar  3 10:14 inferbench
-rw-r--r--  1 dev dev      412 Mar  3 10:14 inferbench.d
$ du -sh target
3.9G	target
$ git status --short
 M crates/inferbench-workload/src/corpus.rs
 M docs/workload.md
?? crates/inferbench-workload/tests/corpora.rs

EOF
        ;;
    1)
        cat <<'EOF'
// sample: JSON document
{
  "schema_version": 3,
  "run": {
    "id": "7f3c2a10-5e8b-4c1d-9a6f-0b2e4d8c1a37",
    "started_at": "2025-03-03T10:21:07.118Z",
    "finished_at": "2025-03-03T10:23:52.904Z",
    "status": "completed"
  },
  "target": {
    "url": "http://10.0.4.17:8000",
    "endpoint": "/v1/chat/completions",
    "model": "example-model-8b-instruct",
    "streaming": true
  },
  "load": {
    "concurrency": 32,
    "request_count": 2000,
    "warmup_requests": 64,
    "arrival": {"kind": "poisson", "rate_per_s": 12.5, "seed": 42}
  },
  "dataset": {
    "kind": "synthetic",
    "prompt_corpus": "coding",
    "isl": {"mean": 1024, "stddev": 128},
    "osl": {"mean": 256, "stddev": 0},
    "entries": 2000
  },
  "results": {
    "requests_ok": 1996,
    "requests_failed": 4,
    "errors": [
      {"type": "TimeoutError", "count": 3},
      {"type": "HTTPStatus503", "count": 1}
    ],
    "ttft_ms": {"p50": 181.4, "p90": 402.7, "p99": 911.0, "max": 1530.2},
    "itl_ms": {"p50": 21.3, "p90": 27.9, "p99": 44.6},
    "output_tokens_per_s": 5871.22,
    "request_throughput_per_s": 12.31,
    "notes": null
  },
  "tags": ["nightly", "a100x8", "tp=4"]
}

EOF
        ;;
    2)
        cat <<'EOF'
// sample: Python traceback
$ python3 tools/summarize.py runs/2025-03-03/profile_export.jsonl
Reading 1996 records from runs/2025-03-03/profile_export.jsonl
Traceback (most recent call last):
  File "/home/dev/inferbench/tools/summarize.py", line 142, in <module>
    main(sys.argv[1:])
  File "/home/dev/inferbench/tools/summarize.py", line 131, in main
    table = summarize(records, percentiles=args.percentiles)
            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/inferbench/tools/summarize.py", line 88, in summarize
    ttft = [r["metrics"]["time_to_first_token"]["value"] for r in records]
            ~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/dev/inferbench/tools/summarize.py", line 88, in <listcomp>
    ttft = [r["metrics"]["time_to_first_token"]["value"] for r in records]
            ~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^
KeyError: 'time_to_first_token'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/lib/python3.12/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/home/dev/inferbench/tools/summarize.py", line 145, in <module>
    raise SystemExit(f"record without TTFT: {exc}") from exc
SystemExit: record without TTFT: 'time_to_first_token'

EOF
        ;;
    3)
        cat <<'EOF'
// sample: unified diff
diff --git a/crates/inferbench-workload/src/sampler.rs b/crates/inferbench-workload/src/sampler.rs
index 3b1f0c2..9d4e7a8 100644
--- a/crates/inferbench-workload/src/sampler.rs
+++ b/crates/inferbench-workload/src/sampler.rs
@@ -41,14 +41,18 @@ impl Sampler {
     /// The next payload index.
     pub fn next(&mut self) -> usize {
         match self.strategy {
-            SamplingStrategy::Sequential => {
-                let i = self.pos;
-                self.pos = (self.pos + 1) % self.len;
-                i
-            }
+            SamplingStrategy::Sequential => self.next_sequential(),
             SamplingStrategy::Random => self.rng.random_range(0..self.len),
             SamplingStrategy::Shuffle => self.next_shuffled(),
         }
     }
+
+    fn next_sequential(&mut self) -> usize {
+        let i = self.pos;
+        self.pos = (self.pos + 1) % self.len;
+        i
+    }
 
     fn next_shuffled(&mut self) -> usize {
         if self.order.is_empty() {
@@ -77,7 +81,7 @@ mod tests {
     #[test]
     fn sequential_wraps() {
         let mut s = Sampler::new(SamplingStrategy::Sequential, 3, 1).unwrap();
-        let got: Vec<usize> = (0..5).map(|_| s.next()).collect();
-        assert_eq!(got, vec![0, 1, 2, 0, 1]);
+        let got: Vec<usize> = (0..7).map(|_| s.next()).collect();
+        assert_eq!(got, vec![0, 1, 2, 0, 1, 2, 0]);
     }
 }

EOF
        ;;
    4)
        cat <<'EOF'
// sample: shell session
$ curl -sS -N http://127.0.0.1:8000/v1/chat/completions \
    -H 'Content-Type: application/json' \
    -d '{"model":"mock-model","stream":true,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}'
data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"role":"assistant","content":" the"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" and"},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":0,"model":"mock-model","choices":[{"index":0,"delta":{"content":" to"},"finish_reason":"length"}]}

data: [DONE]

$ ps -eo pid,ppid,pcpu,rss,etime,cmd --sort=-pcpu | head -5
    PID    PPID %CPU   RSS     ELAPSED CMD
  48211   48190  187 512344       02:41 target/release/inferbench profile --concurrency 64
  48190    3121  0.0  5120       02:42 bash run.sh
   1402       1  1.2 80212  3-04:11:09 /usr/bin/containerd
     88       2  0.3     0  3-04:12:40 [kswapd0]
$ grep -c '"error"' runs/latest/profile_export.jsonl
4
$ tail -n 3 /var/log/bench/server.log
2025-03-03T10:23:51.007Z INFO  engine: batch=31 running=31 waiting=0 kv_usage=0.71
2025-03-03T10:23:51.512Z WARN  engine: request 7f3c... exceeded deadline (30000 ms), aborting
2025-03-03T10:23:52.004Z INFO  engine: batch=28 running=28 waiting=0 kv_usage=0.66

EOF
        ;;
    5)
        cat <<'EOF'
// sample: JSON document
[
  {
    "name": "tokenizer",
    "kind": "huggingface",
    "path": "/models/example-8b/tokenizer.json",
    "sha256": "3e0b7d1c9a4f2e6b8d5c7a1f0e9b2d4c6a8f1e3b5d7c9a0f2e4b6d8c1a3f5e7b",
    "vocab_size": 128256,
    "special_tokens": {
      "bos": {"id": 128000, "content": "<|begin_of_text|>"},
      "eos": {"id": 128009, "content": "<|eot_id|>"},
      "pad": null
    }
  },
  {
    "name": "limits",
    "max_model_len": 8192,
    "max_num_seqs": 256,
    "gpu_memory_utilization": 0.9,
    "enable_prefix_caching": true,
    "scheduler": {"policy": "fcfs", "chunked_prefill": true, "max_num_batched_tokens": 2048}
  },
  {
    "name": "health",
    "checks": [
      {"url": "/health", "expect": 200, "interval_s": 5},
      {"url": "/v1/models", "expect": 200, "interval_s": 30}
    ],
    "last_ok": "2025-03-03T10:20:00Z",
    "consecutive_failures": 0
  }
]

EOF
        ;;
    6)
        cat <<'EOF'
// sample: Python traceback
>>> import json
>>> with open("inputs.json") as f:
...     data = json.load(f)
...
Traceback (most recent call last):
  File "<stdin>", line 2, in <module>
  File "/usr/lib/python3.12/json/__init__.py", line 293, in load
    return loads(fp.read(),
           ^^^^^^^^^^^^^^^^
  File "/usr/lib/python3.12/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/lib/python3.12/json/decoder.py", line 340, in decode
    raise JSONDecodeError("Extra data", s, end)
json.decoder.JSONDecodeError: Extra data: line 2 column 1 (char 418)
>>> sum(1 for _ in open("inputs.json"))
2000
>>> rows = [json.loads(line) for line in open("inputs.json")]
>>> rows[0]["payloads"][0]["max_completion_tokens"]
256
>>> len(rows[0]["payloads"][0]["messages"][0]["content"].split())
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
TypeError: list indices must be integers or slices, not str

EOF
        ;;
    7)
        cat <<'EOF'
// sample: unified diff
--- a/docs/timing.md
+++ b/docs/timing.md
@@ -12,9 +12,11 @@ Every request records four instants on the monotonic clock:
 - `credit_issued`: the scheduler hands the request to a worker.
 - `request_start`: the first byte of the request is written.
-- `first_token`: the first chunk with content arrives.
+- `first_token`: the first chunk with content arrives (a chunk holding only a role,
+  or only usage, does not count).
 - `request_end`: the last byte of the response arrives.
 
-Time to first token is `first_token - request_start`.
+Time to first token is `first_token - request_start`; inter-token latency is
+`(request_end - first_token) / (output_tokens - 1)`, undefined for one token.
 
 ## Clock
 
@@ -40,7 +42,7 @@ The wall clock is read once at start to date the run; every duration
 comes from the monotonic clock, so a clock step during the run changes
 no metric.
 
-Resolution is 1 ns on Linux; elsewhere it is whatever the platform gives.
+Resolution is 1 ns on Linux (`CLOCK_MONOTONIC`); elsewhere, what the platform gives.
 
 ## Schedules

EOF
        ;;
    esac
}

{
    i=0
    for dir in $(find "$root/crates" -mindepth 1 -maxdepth 1 -type d | sort); do
        crate=${dir#"$root"/}
        [ -d "$dir/src" ] || continue
        emit_file "$crate/Cargo.toml"
        left=$CRATE_BUDGET
        for f in $(find "$dir/src" -type f -name '*.rs' | sort); do
            size=$(wc -c <"$f")
            if [ "$size" -le "$left" ]; then
                emit_file "${f#"$root"/}"
                left=$((left - size))
            fi
        done
        sample $((i % 8))
        i=$((i + 1))
    done
    emit_file Cargo.toml
    for d in $DOCS; do
        emit_file "$d"
    done
} >"$out"

printf '%s: %s bytes, sha256 %s\n' "$out" "$(wc -c <"$out")" \
    "$(sha256sum "$out" | cut -d' ' -f1)"
