//! The parts mapped since issue 14's parity work, each from a small config written here,
//! the expected flags worked out by hand from AIPerf's field descriptions.

use std::path::Path;

use super::{Options, flags_from_str};

const CLI: Options = Options {
    scenario: None,
    simulated: false,
    cli: true,
};

/// A minimal valid file with `bench` (YAML lines at two-space indent, under `benchmark:`)
/// and `root` (top-level YAML lines); a dataset and a phase are added when `bench` has
/// none (the schema requires both).
fn yaml(root: &str, bench: &str) -> String {
    let mut bench = bench.to_string();
    if !bench.contains("  dataset:") {
        bench.push_str("  dataset: {type: synthetic}\n");
    }
    if !bench.contains("  phases:") {
        bench.push_str("  phases: {type: concurrency}\n");
    }
    format!(
        "schemaVersion: \"2.0\"\n{root}benchmark:\n  model: m\n  endpoint:\n    url: http://h:8000/v1/chat/completions\n{bench}"
    )
}

fn flags(text: &str, opts: &Options) -> Result<Vec<String>, String> {
    flags_from_str("x.yaml", text, Path::new(""), opts)
}

fn has(f: &[String], w: &[&str]) -> bool {
    f.windows(w.len())
        .any(|x| x.iter().zip(w).all(|(a, b)| a == b))
}

#[test]
fn several_urls_become_repeated_url_flags_with_one_path() {
    let t = "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    urls: [http://a:1/v1/chat/completions, \"b:2/v1/chat/completions\"]\n    urlStrategy: round_robin\n    connectionReuse: never\n  dataset: {type: synthetic}\n  phases: {type: concurrency}\n";
    let f = flags(t, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--url",
                "http://a:1",
                "--url",
                "http://b:2",
                "--url-strategy",
                "round_robin"
            ]
        ),
        "{f:?}"
    );
    assert!(
        has(&f, &["--custom-endpoint", "/v1/chat/completions"]),
        "{f:?}"
    );
    assert!(has(&f, &["--connection-reuse-strategy", "never"]), "{f:?}");
    let e = flags(&t.replace("b:2/v1/chat/completions", "b:2/v2/x"), &CLI).unwrap_err();
    assert!(
        e.contains("benchmark.endpoint.urls: the URLs carry different paths"),
        "{e}"
    );
    // With --simulated the file's URLs (and their strategy) are left out.
    let sim = Options {
        simulated: true,
        ..CLI
    };
    let f = flags(t, &sim).unwrap();
    assert!(
        !f.iter().any(|x| x == "--url" || x == "--url-strategy"),
        "{f:?}"
    );
}

#[test]
fn telemetry_maps_to_its_flags_and_simulated_drops_the_files_urls() {
    let t = yaml(
        "",
        "  gpuTelemetry:\n    urls: [http://g:9400/metrics]\n  serverMetrics:\n    urls: [http://s:8000/metrics]\n    formats: [json]\n",
    );
    let f = flags(&t, &CLI).unwrap();
    assert!(
        has(&f, &["--gpu-telemetry", "http://g:9400/metrics"]),
        "{f:?}"
    );
    assert!(
        has(
            &f,
            &[
                "--server-metrics",
                "http://s:8000/metrics",
                "--server-metrics-formats",
                "json"
            ]
        ),
        "{f:?}"
    );
    let f = flags(
        &t,
        &Options {
            simulated: true,
            ..CLI
        },
    )
    .unwrap();
    assert!(
        !f.iter().any(|x| x.contains("://g") || x.contains("://s")),
        "{f:?}"
    );
    let off = yaml(
        "",
        "  gpuTelemetry: {enabled: false}\n  serverMetrics: {enabled: false}\n",
    );
    let f = flags(&off, &CLI).unwrap();
    assert!(
        has(&f, &["--no-gpu-telemetry"]) && has(&f, &["--no-server-metrics"]),
        "{f:?}"
    );
    // jsonl is written; parquet is left out with a note naming why.
    let formats = yaml(
        "",
        "  serverMetrics:\n    formats: [json, jsonl, parquet]\n",
    );
    let f = flags(&formats, &CLI).unwrap();
    assert!(
        has(&f, &["--server-metrics-formats", "json,jsonl"]),
        "{f:?}"
    );
    let note = f
        .iter()
        .find(|x| x.contains("benchmark.serverMetrics.formats"))
        .expect("a note");
    // Only parquet is named as dropped (jsonl would read `jsonl, parquet: not written`).
    assert!(
        note.contains("benchmark.serverMetrics.formats: parquet: not written")
            && note.contains("no Parquet writer"),
        "{note}"
    );
    // A local collector becomes the flag value that names it (refused by that flag).
    let local = yaml("", "  gpuTelemetry: {collector: pynvml}\n");
    assert!(has(
        &flags(&local, &CLI).unwrap(),
        &["--gpu-telemetry", "pynvml"]
    ));
    // In a plan, telemetry is the plan's: refused.
    let e = flags(&t, &Options::default()).unwrap_err();
    assert!(
        e.contains("benchmark.gpuTelemetry: not built in inferbench plans"),
        "{e}"
    );
}

#[test]
fn artifacts_raw_trace_and_slices_map_and_trace_timing_is_refused() {
    let t = yaml(
        "",
        "  artifacts:\n    raw: true\n    trace: true\n    sliceDuration: 2m\n",
    );
    let f = flags(&t, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--slice-duration",
                "120",
                "--export-level",
                "raw",
                "--export-http-trace"
            ]
        ),
        "{f:?}"
    );
    let f = flags(&t.replace("trace: true", "showTraceTiming: true"), &CLI).unwrap();
    assert!(f.iter().any(|x| x == "--show-trace-timing"), "{f:?}");
}

#[test]
fn a_phases_cancellation_and_a_user_centric_phase_map() {
    let t = yaml(
        "",
        "  phases:\n    type: poisson\n    rate: 4\n    cancellation: {rate: 10, delay: 0.5}\n",
    );
    let f = flags(&t, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--request-cancellation-rate",
                "10",
                "--request-cancellation-delay",
                "0.5"
            ]
        ),
        "{f:?}"
    );
    let u = yaml(
        "",
        "  phases:\n    type: user_centric\n    rate: 2\n    users: 30\n    duration: 60\n",
    );
    let f = flags(&u, &CLI).unwrap();
    assert!(
        has(&f, &["--user-centric-rate", "2", "--num-users", "30"]),
        "{f:?}"
    );
    // A session count stops the profiling phase (AIPerf's `sessions`).
    let s = yaml("", "  phases:\n    type: concurrency\n    sessions: 5\n");
    let f = flags(&s, &CLI).unwrap();
    assert!(has(&f, &["--num-profiling-sessions", "5"]), "{f:?}");
}

#[test]
fn a_warmup_at_a_rate_maps_to_the_warmup_rate_flags() {
    let t = yaml(
        "",
        "  phases:\n    - {name: warmup, type: constant, rate: 5, requests: 10, gracePeriod: 3}\n    - {name: profiling, type: concurrency, concurrency: 2}\n",
    );
    let f = flags(&t, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--warmup-request-rate",
                "5",
                "--warmup-arrival-pattern",
                "constant"
            ]
        ),
        "{f:?}"
    );
    assert!(
        has(&f, &["--warmup-request-count", "10"]) && has(&f, &["--warmup-grace-period", "3"]),
        "{f:?}"
    );
}

#[test]
fn prefix_prompts_turns_and_batches_map() {
    let t = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts: {isl: 32, osl: 8, batchSize: 4}\n    prefixPrompts: {poolSize: 10, length: 512}\n    turns: {mean: 4, stddev: 1}\n    turnDelay: {mean: 1500, stddev: 500}\n    turnDelayRatio: 0.5\n",
    );
    let f = flags(&t, &CLI).unwrap();
    for w in [
        &["--batch-size", "4"][..],
        &[
            "--num-prefix-prompts",
            "10",
            "--prefix-prompt-length",
            "512",
        ],
        &[
            "--conversation-turn-mean",
            "4",
            "--conversation-turn-stddev",
            "1",
        ],
        &[
            "--conversation-turn-delay-mean",
            "1500",
            "--conversation-turn-delay-stddev",
            "500",
        ],
        &["--conversation-turn-delay-ratio", "0.5"],
    ] {
        assert!(has(&f, w), "{w:?}: {f:?}");
    }
}

#[test]
fn mixtures_become_one_seq_dist_of_the_product_of_the_weights() {
    // ISL: 60/40 of (128 ± 30) and (2048); OSL: 50/50 of 64 and 512 → four pairs,
    // 0.6·0.5 = 30 %, 30 %, 0.4·0.5 = 20 %, 20 %.
    let t = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts:\n      isl: {peaks: [{mean: 128, stddev: 30, weight: 60}, {mean: 2048, weight: 40}]}\n      osl: {points: [{value: 64}, {value: 512}]}\n",
    );
    let f = flags(&t, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--seq-dist",
                "128|30,64:30;128|30,512:30;2048,64:20;2048,512:20"
            ]
        ),
        "{f:?}"
    );
    assert!(!f.iter().any(|x| x == "--isl"), "{f:?}");
    // AIPerf's sequenceDistribution: the pairs as given (isl/osl ignored beside it).
    let s = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts:\n      isl: 99\n      sequenceDistribution:\n        - {isl: 2048, osl: 256, probability: 30}\n        - {isl: {mean: 8192, stddev: 100}, osl: 512, probability: 70}\n",
    );
    let f = flags(&s, &CLI).unwrap();
    assert!(
        has(&f, &["--seq-dist", "2048,256:30;8192|100,512:70"]),
        "{f:?}"
    );
    assert!(!f.iter().any(|x| x == "99"), "{f:?}");
    // Log-normal and clamps go out whole as --isl-dist (checked, so an error names the path).
    let ln = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts: {isl: {mean: 512, median: 400}}\n",
    );
    let f = flags(&ln, &CLI).unwrap();
    assert!(
        has(&f, &["--isl-dist", r#"{"mean":512,"median":400}"#]),
        "{f:?}"
    );
    let cl = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts: {isl: {mean: 512, stddev: 9, max: 600}, osl: 64}\n",
    );
    let f = flags(&cl, &CLI).unwrap();
    assert!(
        has(
            &f,
            &[
                "--isl-dist",
                r#"{"mean":512,"stddev":9,"max":600}"#,
                "--osl-dist",
                "64"
            ]
        ),
        "{f:?}"
    );
    let bad = yaml(
        "",
        "  dataset:\n    type: synthetic\n    prompts: {isl: {mean: 400, median: 512}}\n",
    );
    let e = flags(&bad, &CLI).unwrap_err();
    assert!(
        e.contains("benchmark.dataset.prompts.isl.median: 512 is above the mean 400"),
        "{e}"
    );
}

#[test]
fn baseten_replay_keys_map_to_their_flags() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../inferbench-workload/tests/data/datasets/baseten.parquet");
    let bench = format!(
        "  dataset:\n    type: file\n    path: {}\n    format: baseten_trace\n    replaySpeedup: 10\n    maxIdleGapCapSeconds: 30\n    traceSessionSampleRatio: 0.5\n    openLoopReplay: false\n    omitKvHints: true\n    forceMinTokens: true\n",
        trace.display()
    );
    let f = flags(&yaml("", &bench), &CLI).unwrap();
    for w in [
        &["--custom-dataset-type", "baseten_trace"][..],
        &["--replay-speedup", "10"],
        &["--max-idle-gap-cap-seconds", "30"],
        &["--trace-session-sample-ratio", "0.5"],
        &["--no-open-loop-replay"],
        &["--omit-kv-hints"],
    ] {
        assert!(has(&f, w), "{w:?} in {f:?}");
    }
    // forceMinTokens at its default changes nothing and adds no flag.
    assert!(!f.iter().any(|x| x.contains("force-min-tokens")), "{f:?}");
}
