use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

/// A fresh directory, removed when the guard drops.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("inferbench-speed-{name}-"))
        .tempdir()
        .unwrap()
}

fn profile(model: &str, dataset: Value, otp: f64) -> Value {
    json!({
        "input_config": {"models": {"items": [{"name": model}]}, "datasets": [dataset]},
        "output_token_throughput": {"unit": "tokens/sec", "avg": otp},
    })
}

fn run(root: &Path, name: &str, profile: &Value, server: Option<&Value>) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(PROFILE_JSON), profile.to_string()).unwrap();
    if let Some(s) = server {
        std::fs::write(d.join(SERVER_METRICS_JSON), s.to_string()).unwrap();
    }
    d
}

fn counter(total: f64) -> Value {
    json!({"type": "counter", "series": [{"stats": {"total": total, "rate": 1.0}}]})
}

fn gauge(avg: f64) -> Value {
    json!({"type": "gauge", "series": [{"stats": {"avg": avg}}]})
}

fn file(format: &str) -> Value {
    json!({"name": "main", "type": "file", "path": "x.jsonl", "format": format})
}

#[test]
fn vllm_counters_give_length_and_rate() {
    // 300 accepted tokens over 100 draft steps: each step also verifies one token, so the
    // mean accepted length is 300/100 + 1 = 4.0; over 400 draft tokens the rate is 0.75.
    let m = json!({"metrics": {
        "vllm:spec_decode_num_accepted_tokens": counter(300.0),
        "vllm:spec_decode_num_drafts": counter(100.0),
        "vllm:spec_decode_num_draft_tokens": counter(400.0),
    }});
    assert_eq!(accept_length(&m), Some(4.0));
    assert_eq!(accept_rate(&m), Some(0.75));
    // No drafts: no value (not a division by zero).
    let m = json!({"metrics": {
        "vllm:spec_decode_num_accepted_tokens": counter(0.0),
        "vllm:spec_decode_num_drafts": counter(0.0),
        "vllm:spec_decode_num_draft_tokens": counter(0.0),
    }});
    assert_eq!(accept_length(&m), None);
    assert_eq!(accept_rate(&m), None);
}

#[test]
fn an_engine_gauge_wins_and_the_fuzzy_name_is_the_last_resort() {
    let m = json!({"metrics": {
        "sglang:spec_accept_length": gauge(2.5),
        "vllm:spec_decode_num_accepted_tokens": counter(300.0),
        "vllm:spec_decode_num_drafts": counter(100.0),
    }});
    assert_eq!(accept_length(&m), Some(2.5));
    // Only an unknown engine's name with all three words: its average.
    let m = json!({"metrics": {
        "request_acceptance_total_length": gauge(9.0),
        "myengine:SpecAcceptLength": gauge(3.25),
    }});
    assert_eq!(accept_length(&m), Some(3.25));
    assert_eq!(accept_rate(&m), None);
}

#[test]
fn category_comes_from_format_then_dataset_with_the_prefix_removed() {
    let p = profile("m", file("speed_bench_coding"), 1.0);
    assert_eq!(category(&p).as_deref(), Some("coding"));
    let p = profile(
        "m",
        json!({"type": "public", "dataset": "spec_al_gsm8k"}),
        1.0,
    );
    assert_eq!(category(&p).as_deref(), Some("gsm8k"));
    let p = profile("m", file("single_turn"), 1.0);
    assert_eq!(category(&p), None);
    let p = json!({"input_config": {"models": {"items": [{"name": ""}, {"name": "b"}]}}});
    assert_eq!(model(&p), "b");
    assert_eq!(model(&json!({})), "unknown");
}

#[test]
fn the_matrix_orders_columns_and_averages_rows() {
    let guard = tmp("matrix");
    let root = guard.path().to_path_buf();
    let vllm = |acc: f64, drafts: f64| {
        json!({"metrics": {
            "vllm:spec_decode_num_accepted_tokens": counter(acc),
            "vllm:spec_decode_num_drafts": counter(drafts),
        }})
    };
    // Model a: math 200/100+1 = 3.0, coding 150/100+1 = 2.5; overall (3.0+2.5)/2 = 2.75.
    run(
        &root,
        "a-math",
        &profile("a", file("speed_bench_math"), 10.0),
        Some(&vllm(200.0, 100.0)),
    );
    run(
        &root,
        "a-coding",
        &profile("a", file("speed_bench_coding"), 20.0),
        Some(&vllm(150.0, 100.0)),
    );
    // Model b: coding has no server metrics file (a warning, no value); overall from
    // math alone: 100/50+1 = 3.0.
    run(
        &root,
        "b-coding",
        &profile("b", file("speed_bench_coding"), 30.0),
        None,
    );
    run(
        &root,
        "b-math",
        &profile("b", file("speed_bench_math"), 40.0),
        Some(&vllm(100.0, 50.0)),
    );
    // Not a SPEED-Bench run: skipped with a warning.
    run(
        &root,
        "c-other",
        &profile("c", file("single_turn"), 1.0),
        None,
    );

    let mut w = Vec::new();
    let r = build(
        std::slice::from_ref(&root),
        SpeedMetric::AcceptLength,
        &mut w,
    )
    .unwrap();
    assert_eq!(r.run_dirs, 5);
    // The qualitative set's order: coding before math.
    assert_eq!(r.columns, vec!["coding", "math"]);
    assert_eq!(r.rows.len(), 2);
    assert_eq!(r.rows[0].model, "a");
    assert_eq!(r.rows[0].values, vec![Some(2.5), Some(3.0)]);
    assert_eq!(r.rows[0].overall, Some(2.75));
    assert_eq!(r.rows[1].values, vec![None, Some(3.0)]);
    assert_eq!(r.rows[1].overall, Some(3.0));
    assert!(
        w.iter()
            .any(|w| w.contains("no server_metrics_export.json"))
    );
    assert!(w.iter().any(|w| w.contains("cannot determine category")));
    assert_eq!(
        csv(&r),
        "Model,coding,math,Overall\r\na,2.50,3.00,2.75\r\nb,,3.00,3.00\r\n"
    );
    let t = table(&r, SpeedMetric::AcceptLength);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "Acceptance Length Report");
    // Every column at least 8 wide, right-aligned, two spaces apart.
    assert_eq!(lines[1], "   Model    coding      math   Overall");
    assert_eq!(lines[3], "       a      2.50      3.00      2.75");
    assert_eq!(lines[4], "       b         -      3.00      3.00");

    // Throughput needs no server metrics: output_token_throughput.avg.
    let r = build(std::slice::from_ref(&root), SpeedMetric::Throughput, &mut w).unwrap();
    assert_eq!(r.rows[0].values, vec![Some(20.0), Some(10.0)]);
    assert_eq!(r.rows[1].overall, Some(35.0));
}

#[test]
fn throughput_tiers_and_unknown_categories_have_their_own_order() {
    assert_eq!(
        columns(["mixed", "high_entropy", "low_entropy"].into_iter()),
        vec!["low_entropy", "mixed", "high_entropy"]
    );
    assert_eq!(
        columns(["mbpp", "gsm8k", "mtbench"].into_iter()),
        vec!["gsm8k", "mtbench", "mbpp"]
    );
    // A mix of sets: sorted by name.
    assert_eq!(
        columns(["mixed", "coding", "gsm8k"].into_iter()),
        vec!["coding", "gsm8k", "mixed"]
    );
}

#[test]
fn aiperfs_two_errors() {
    let guard = tmp("errors");
    let root = guard.path().to_path_buf();
    let mut w = Vec::new();
    assert_eq!(
        build(std::slice::from_ref(&root), SpeedMetric::Throughput, &mut w).unwrap_err(),
        "no aiperf run directories found"
    );
    run(
        &root,
        "x",
        &profile("m", file("speed_bench_math"), 1.0),
        None,
    );
    assert_eq!(
        build(std::slice::from_ref(&root), SpeedMetric::AcceptRate, &mut w).unwrap_err(),
        "no SPEED-Bench results extracted"
    );
    // A later run of the same model and category replaces the earlier cell.
    run(
        &root,
        "y",
        &profile("m", file("speed_bench_math"), 5.0),
        None,
    );
    let r = build(std::slice::from_ref(&root), SpeedMetric::Throughput, &mut w).unwrap();
    assert_eq!(r.rows[0].values, vec![Some(5.0)]);
    // A damaged profile file is a warning naming it, not a panic.
    std::fs::write(root.join("y").join(PROFILE_JSON), "{not json").unwrap();
    let r = build(std::slice::from_ref(&root), SpeedMetric::Throughput, &mut w).unwrap();
    assert!(
        w.iter()
            .any(|w| w.contains("failed to read") && w.contains("/y/"))
    );
    assert_eq!(r.rows[0].values, vec![Some(1.0)]);
}
