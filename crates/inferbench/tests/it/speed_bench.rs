//! `speed-bench-report` over real runs of two SPEED-Bench categories against the built-in
//! simulated server: the category read from our own `input_config` (`format`), throughput
//! from the summary, acceptance length from a server-metrics export written here by hand
//! (the simulated server has no speculative decoding), and AIPerf's error for no value.

use std::path::Path;

use serde_json::json;

use crate::common::*;

const SPEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../inferbench-workload/tests/data/datasets/speed_bench_qualitative.jsonl"
);

fn profile_category(root: &Path, category: &str) {
    let dir = root.join(category);
    let o = run(&[
        "profile",
        "--input-file",
        SPEED,
        "--custom-dataset-type",
        &format!("speed_bench_{category}"),
        "--request-count",
        "1",
        "--concurrency",
        "1",
        "--ui",
        "none",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_matrix_over_two_categories() {
    let root = tmpdir("speed-bench");
    profile_category(&root, "math");
    profile_category(&root, "coding");
    let c = read_json(&root.join("math/profile_export_aiperf.json"));
    assert_eq!(
        c["input_config"]["datasets"][0]["format"],
        "speed_bench_math"
    );

    // Throughput: each run's own output_token_throughput.avg, two decimals; Overall their mean.
    let csv = root.join("t.csv");
    let o = run(&[
        "speed-bench-report",
        root.to_str().unwrap(),
        "--metric",
        "throughput",
        "--output",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tp = |cat: &str| {
        read_json(&root.join(cat).join("profile_export_aiperf.json"))["output_token_throughput"]
            ["avg"]
            .as_f64()
            .unwrap()
    };
    let (coding, math) = (tp("coding"), tp("math"));
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        format!(
            "Model,coding,math,Overall\r\nmock-model,{coding:.2},{math:.2},{:.2}\r\n",
            (coding + math) / 2.0
        )
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.starts_with("Found 2 run directories.\nThroughput Report (tokens/sec)\n"),
        "{out}"
    );

    // Acceptance length: no server reports speculative decoding, so AIPerf's error, exit 1.
    let o = run(&[
        "speed-bench-report",
        root.to_str().unwrap(),
        "--format",
        "table",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no SPEED-Bench results extracted"),
        "{}",
        stderr(&o)
    );

    // With vLLM's counters in one run's export: 90 accepted over 30 draft steps → 4.00; the
    // other category has none (a dash, and Overall from the one value).
    let metrics = json!({"metrics": {
        "vllm:spec_decode_num_accepted_tokens":
            {"type": "counter", "series": [{"stats": {"total": 90.0, "rate": 1.0}}]},
        "vllm:spec_decode_num_drafts":
            {"type": "counter", "series": [{"stats": {"total": 30.0, "rate": 1.0}}]},
    }});
    std::fs::write(
        root.join("math/server_metrics_export.json"),
        metrics.to_string(),
    )
    .unwrap();
    let o = run(&[
        "speed-bench-report",
        root.join("math").to_str().unwrap(),
        root.join("coding").to_str().unwrap(),
        "--format",
        "csv",
        "--output",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        "Model,coding,math,Overall\r\nmock-model,,4.00,4.00\r\n"
    );

    // Nothing that is a run: one line, exit 1.
    let o = run(&["speed-bench-report", "/nonexistent-speed-bench-dir"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("is not a directory, skipping"));
    assert!(stderr(&o).contains("no aiperf run directories found"));
    // An unknown metric: clap's usage error, exit 2.
    let o = run(&[
        "speed-bench-report",
        root.to_str().unwrap(),
        "--metric",
        "speed",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
