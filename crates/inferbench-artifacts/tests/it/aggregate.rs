//! Repeated-run and sweep aggregates against real AIPerf 0.13.0 files (copied into
//! `tests/data/aggregate/`): our structs are built from the same runs' own
//! `profile_export_aiperf.json`, and the outputs must reproduce AIPerf's aggregates.

use std::path::PathBuf;

use inferbench_artifacts::aggregate::{
    ConfidenceMeta, SweepCell, SweepMeta, confidence_csv, confidence_json, sweep_csv, sweep_json,
    write_confidence, write_sweep,
};
use inferbench_core::summary::{MetricResult, MetricValue, Stats, Summary};
use inferbench_metrics::confidence::aggregate;
use serde_json::{Map, Value, json};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/aggregate")
        .join(rel)
}

fn read(rel: &str) -> String {
    let p = data(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn read_json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A run's metrics from its `profile_export_aiperf.json`: every top-level object with a
/// `unit` and an `avg`; `{unit, avg}` alone is a scalar. Header = tag (not exported here).
fn summary(rel: &str) -> Summary {
    let Value::Object(top) = read_json(rel) else {
        panic!("{rel}: not an object")
    };
    let mut metrics = Vec::new();
    for (tag, v) in &top {
        let Some(o) = v.as_object() else { continue };
        let (Some(unit), Some(avg)) = (o.get("unit").and_then(Value::as_str), o.get("avg")) else {
            continue;
        };
        let f = |k: &str| o.get(k).and_then(Value::as_f64);
        let value = if o.len() == 2 {
            MetricValue::Scalar {
                value: avg.as_f64().unwrap(),
            }
        } else {
            MetricValue::Distribution {
                stats: Stats {
                    avg: f("avg"),
                    p1: f("p1"),
                    p5: f("p5"),
                    p10: f("p10"),
                    p25: f("p25"),
                    p50: f("p50"),
                    p75: f("p75"),
                    p90: f("p90"),
                    p95: f("p95"),
                    p99: f("p99"),
                    min: f("min"),
                    max: f("max"),
                    std: f("std"),
                    count: o.get("count").and_then(Value::as_u64).unwrap_or(0),
                    sum: f("sum"),
                },
            }
        };
        metrics.push(MetricResult {
            tag: tag.clone(),
            header: tag.clone(),
            unit: unit.to_string(),
            value,
        });
    }
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics,
        error_summary: Vec::new(),
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Same structure and key order; numbers to 1e-9 relative; everything else equal.
fn assert_close(got: &Value, want: &Value, at: &str) {
    match (got, want) {
        (Value::Number(g), Value::Number(w)) => {
            let (g, w) = (g.as_f64().unwrap(), w.as_f64().unwrap());
            assert!(close(g, w), "{at}: got {g}, want {w}");
        }
        (Value::Object(g), Value::Object(w)) => {
            let gk: Vec<_> = g.keys().collect();
            let wk: Vec<_> = w.keys().collect();
            assert_eq!(gk, wk, "{at}: keys");
            for (k, wv) in w {
                assert_close(&g[k], wv, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            assert_eq!(g.len(), w.len(), "{at}: length");
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                assert_close(gv, wv, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{at}"),
    }
}

fn multi_runs() -> Vec<Summary> {
    ["run_0001", "run_0002"]
        .map(|r| {
            summary(&format!(
                "multi/profile_runs/{r}/profile_export_aiperf.json"
            ))
        })
        .to_vec()
}

fn multi_meta() -> ConfidenceMeta {
    ConfidenceMeta {
        num_profile_runs: 2,
        num_successful_runs: 2,
        failed_runs: Vec::new(),
        confidence_level: 0.95,
        run_labels: vec!["run_0001".into(), "run_0002".into()],
        cooldown_seconds: 0.0,
        extra: Map::new(),
    }
}

fn ours_version(mut v: Value) -> Value {
    v["aiperf_version"] = json!(inferbench_artifacts::summary_json::tool_version_string());
    v
}

#[test]
fn confidence_json_reproduces_two_run_aggregate() {
    let entries = aggregate(&multi_runs(), 0.95).unwrap();
    let got = confidence_json(&entries, &multi_meta());
    let want = ours_version(read_json(
        "multi/aggregate/profile_export_aiperf_aggregate.json",
    ));

    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&got), keys(&want));
    assert_eq!(got["schema_version"], want["schema_version"]);
    assert_eq!(
        got["metadata"], want["metadata"],
        "metadata, key order included"
    );

    // AIPerf lists the metrics in hash order: compare as a map, each metric's keys in order.
    let (g, w) = (
        got["metrics"].as_object().unwrap(),
        want["metrics"].as_object().unwrap(),
    );
    let mut gk: Vec<_> = g.keys().collect();
    let mut wk: Vec<_> = w.keys().collect();
    gk.sort();
    wk.sort();
    assert_eq!(gk, wk, "metric keys");
    assert_eq!(g.len(), 618);
    for (k, wv) in w {
        assert_close(&g[k], wv, k);
    }
    // The `null`s (cv of a zero mean) are where AIPerf's are.
    assert_eq!(g["http_req_blocked_p50"]["cv"], Value::Null);
    assert_eq!(g["request_throughput_avg"]["unit"], "requests/sec");
}

/// Lines of a CRLF file: (metric rows, everything from the blank line on).
fn split_csv(text: &str) -> (String, Vec<String>, Vec<String>) {
    let lines: Vec<&str> = text.split("\r\n").collect();
    let blank = lines.iter().position(|l| l.is_empty()).unwrap();
    (
        lines[0].to_string(),
        lines[1..blank].iter().map(|s| s.to_string()).collect(),
        lines[blank..].iter().map(|s| s.to_string()).collect(),
    )
}

#[test]
fn confidence_csv_reproduces_two_run_aggregate_lines() {
    let entries = aggregate(&multi_runs(), 0.95).unwrap();
    let got = confidence_csv(&entries, &multi_meta());
    let want = read("multi/aggregate/profile_export_aiperf_aggregate.csv");
    let (gh, mut grows, gtail) = split_csv(&got);
    let (wh, mut wrows, wtail) = split_csv(&want);
    assert_eq!(gh, wh);
    assert_eq!(gtail, wtail, "metadata section");
    // A few rows byte for byte (2/4 decimals, `inf` cv), then all rows as a set (AIPerf's
    // row order is a hash order).
    for line in [
        "request_throughput_avg,",
        "http_req_blocked_p50,0.00,0.00,0.00,0.00,inf,0.0000,0.00,0.00,12.7062,ms",
        "effective_latency_p95,15.82,0.58,15.41,16.23,0.0369,0.4132,10.57,21.07,12.7062,ms",
        "time_to_first_token_sum,53.47,0.65,53.01,53.93,0.0122,0.4602,47.63,59.32,12.7062,ms",
    ] {
        let find = |rows: &[String]| rows.iter().find(|r| r.starts_with(line)).cloned();
        assert!(find(&wrows).is_some(), "fixture has {line}");
        assert_eq!(find(&grows), find(&wrows), "{line}");
    }
    grows.sort();
    wrows.sort();
    assert_eq!(grows, wrows);
    // Our order: first run's metric order, AIPerf's STAT_KEYS order within a metric.
    let (_, ours, _) = split_csv(&got);
    assert!(ours[0].starts_with("request_throughput_avg,"));
    assert!(ours[1].starts_with("request_latency_avg,"));
    assert!(ours[2].starts_with("request_latency_min,"));
}

fn cell_meta(c: u32) -> ConfidenceMeta {
    let mut extra = Map::new();
    extra.insert(
        "variation_label".into(),
        json!(format!("phases.profiling.concurrency={c}")),
    );
    extra.insert(
        "variation_values".into(),
        json!({"phases.profiling.concurrency": c}),
    );
    extra.insert("sweep_mode".into(), json!("repeated"));
    extra.insert("model".into(), json!("mock-model"));
    ConfidenceMeta {
        num_profile_runs: 1,
        num_successful_runs: 1,
        failed_runs: Vec::new(),
        confidence_level: 0.95,
        run_labels: vec!["run_0001".into()],
        cooldown_seconds: 0.0,
        extra,
    }
}

/// With one run AIPerf's order is deterministic (metric order × STAT_KEYS), so both files
/// match byte for byte (but for the tool name in `aiperf_version`).
#[test]
fn one_run_confidence_files_match_byte_for_byte() {
    for c in [1, 2] {
        let run = summary(&format!("sweep/concurrency_{c}/profile_export_aiperf.json"));
        let entries = aggregate(&[run], 0.95).unwrap();
        let meta = cell_meta(c);
        let dir = format!("sweep/aggregate/concurrency_{c}");

        let got = serde_json::to_string_pretty(&confidence_json(&entries, &meta)).unwrap();
        let want = read(&format!("{dir}/profile_export_aiperf_aggregate.json")).replace(
            "\"aiperf_version\": \"0.13.0\"",
            &format!(
                "\"aiperf_version\": \"{}\"",
                inferbench_artifacts::summary_json::tool_version_string()
            ),
        );
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "concurrency {c} JSON line {}", i + 1);
        }
        assert_eq!(got, want, "concurrency {c} JSON");

        let got = confidence_csv(&entries, &meta);
        let want = read(&format!("{dir}/profile_export_aiperf_aggregate.csv"));
        for (i, (g, w)) in got.split("\r\n").zip(want.split("\r\n")).enumerate() {
            assert_eq!(g, w, "concurrency {c} CSV line {}", i + 1);
        }
        assert_eq!(got, want, "concurrency {c} CSV");
    }
}

fn sweep_cells() -> Vec<SweepCell> {
    [1, 2]
        .map(|c| SweepCell {
            entries: None,
            parameters: vec![("concurrency".into(), json!(c))],
            runs: vec![summary(&format!(
                "sweep/concurrency_{c}/profile_export_aiperf.json"
            ))],
        })
        .to_vec()
}

fn sweep_meta() -> SweepMeta {
    SweepMeta {
        sweep_mode: "repeated".into(),
        num_profile_runs: 2,
        num_successful_runs: 2,
        failed_runs: Vec::new(),
        extra: Map::new(),
    }
}

#[test]
fn sweep_files_match_byte_for_byte() {
    let got = sweep_json(&sweep_cells(), &sweep_meta(), 0.95).unwrap();
    let want = read_json("sweep/sweep_aggregate/profile_export_aiperf_sweep.json");
    assert_close(&got, &want, "sweep");
    assert_eq!(got, want);
    let text = serde_json::to_string_pretty(&got).unwrap();
    assert_eq!(
        text,
        read("sweep/sweep_aggregate/profile_export_aiperf_sweep.json")
    );

    let got = sweep_csv(&sweep_cells(), &sweep_meta(), 0.95).unwrap();
    let want = read("sweep/sweep_aggregate/profile_export_aiperf_sweep.csv");
    for (i, (g, w)) in got.split("\r\n").zip(want.split("\r\n")).enumerate() {
        assert_eq!(g, w, "sweep CSV line {}", i + 1);
    }
    assert_eq!(got, want);
}

/// A cell with several runs carries the confidence statistics (minus `se`, `t_critical`)
/// under `<tag>_<stat>` keys: the two-run fixture's values.
#[test]
fn multi_run_sweep_cell_carries_confidence_stats() {
    let cells = vec![SweepCell {
        entries: None,
        parameters: vec![("concurrency".into(), json!(2))],
        runs: multi_runs(),
    }];
    let got = sweep_json(&cells, &sweep_meta(), 0.95).unwrap();
    let want = read_json("multi/aggregate/profile_export_aiperf_aggregate.json");
    let g = got["per_combination_metrics"][0]["metrics"]
        .as_object()
        .unwrap();
    let w = want["metrics"].as_object().unwrap();
    assert_eq!(g.len(), w.len());
    for (k, wv) in w {
        let wv: Map<String, Value> = wv
            .as_object()
            .unwrap()
            .iter()
            .filter(|(s, _)| *s != "se" && *s != "t_critical")
            .map(|(s, v)| (s.clone(), v.clone()))
            .collect();
        assert_close(&g[k], &Value::Object(wv), k);
    }
    assert_eq!(got["metadata"]["num_trials_per_value"], 2);
    // One combination: it is best on both counts and the only Pareto point.
    assert_eq!(
        got["best_configurations"]["best_throughput"]["parameters"],
        json!({"concurrency": 2})
    );
    assert_eq!(
        got["best_configurations"]["best_latency_p99"]["unit"],
        json!("ms")
    );
    assert_eq!(got["pareto_optimal"], json!([{"concurrency": 2}]));
}

fn synthetic(throughput: f64, ttft_p99: f64) -> Summary {
    Summary {
        definitions: "aiperf-0.13".into(),
        metrics: vec![
            MetricResult {
                tag: "request_throughput".into(),
                header: "Request Throughput".into(),
                unit: "requests/sec".into(),
                value: MetricValue::Scalar { value: throughput },
            },
            MetricResult {
                tag: "time_to_first_token".into(),
                header: "Time to First Token".into(),
                unit: "ms".into(),
                value: MetricValue::Distribution {
                    stats: Stats {
                        avg: Some(ttft_p99 / 2.0),
                        p99: Some(ttft_p99),
                        count: 4,
                        ..Stats::default()
                    },
                },
            },
        ],
        error_summary: Vec::new(),
    }
}

#[test]
fn best_configurations_and_pareto_follow_aiperf_rules() {
    let cell = |c: u32, runs: [(f64, f64); 2]| SweepCell {
        entries: None,
        parameters: vec![("concurrency".into(), json!(c))],
        runs: runs.map(|(t, l)| synthetic(t, l)).to_vec(),
    };
    // c=4 is dominated by c=2 (more throughput, less latency); c=1 has the lowest latency.
    let cells = vec![
        cell(4, [(15.0, 9.0), (15.0, 9.0)]),
        cell(1, [(10.0, 5.0), (12.0, 5.0)]),
        cell(2, [(20.0, 8.0), (22.0, 8.0)]),
        SweepCell {
            entries: None,
            parameters: vec![("concurrency".into(), json!(8))],
            runs: Vec::new(),
        },
    ];
    let meta = SweepMeta {
        num_profile_runs: 8,
        num_successful_runs: 6,
        failed_runs: vec!["run_0007".into(), "run_0008".into()],
        ..sweep_meta()
    };
    let v = sweep_json(&cells, &meta, 0.95).unwrap();
    assert_eq!(
        v["best_configurations"],
        json!({
            "best_throughput": {"parameters": {"concurrency": 2}, "metric": 21.0, "unit": "requests/sec"},
            "best_latency_p99": {"parameters": {"concurrency": 1}, "metric": 5.0, "unit": "ms"},
        })
    );
    assert_eq!(
        v["pareto_optimal"],
        json!([{"concurrency": 1}, {"concurrency": 2}])
    );
    // The run-less cell is no row but still one of the swept values.
    assert_eq!(v["per_combination_metrics"].as_array().unwrap().len(), 3);
    assert_eq!(
        v["metadata"]["sweep_parameters"],
        json!([{"name": "concurrency", "values": [4, 1, 2, 8]}])
    );
    assert_eq!(v["metadata"]["num_combinations"], 4);
    assert_eq!(
        v["failed_runs"][1],
        json!({"label": "run_0008", "error": null})
    );

    let csv = sweep_csv(&cells, &meta, 0.95).unwrap();
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert!(lines[0].starts_with(
        "concurrency,request_throughput_avg_mean,request_throughput_avg_std,\
         request_throughput_avg_min,request_throughput_avg_max,request_throughput_avg_cv,"
    ));
    assert!(lines[2].starts_with("1,11.00,1.41,10.00,12.00,0.1286,"));
    let tail = lines[4..].join("\n");
    assert_eq!(
        tail,
        "\nBest Configurations\nConfiguration,concurrency,Metric,Unit\n\
         Best Throughput,2,21.00,requests/sec\nBest Latency P99,1,5.00,ms\n\
         \nPareto Optimal Points\nconcurrency\n1\n2\n\
         \nMetadata\nField,Value\nAggregation Type,sweep\nSweep Parameters,concurrency\n\
         Number of Combinations,4\nNumber of Profile Runs,8\nNumber of Successful Runs,6\n"
    );
}

#[test]
fn invalid_level_is_an_error_only_when_a_cell_needs_it() {
    assert!(sweep_json(&sweep_cells(), &sweep_meta(), 1.5).is_ok());
    let cells = vec![SweepCell {
        entries: None,
        parameters: vec![("concurrency".into(), json!(2))],
        runs: multi_runs(),
    }];
    assert!(sweep_json(&cells, &sweep_meta(), 1.5).is_err());
    let tmp = tempfile::Builder::new()
        .prefix("ib-agg-level-")
        .tempdir()
        .unwrap();
    let err = write_sweep(tmp.path(), &cells, &sweep_meta(), 1.5).unwrap_err();
    assert!(
        err.path().ends_with("profile_export_aiperf_sweep.json"),
        "{err}"
    );
}

#[test]
fn writers_write_both_files_and_name_the_file_on_error() {
    let tmp = tempfile::Builder::new()
        .prefix("ib-agg-write-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().to_path_buf();
    let entries = aggregate(&multi_runs(), 0.95).unwrap();
    let paths = write_confidence(&dir, &entries, &multi_meta()).unwrap();
    assert_eq!(
        paths,
        vec![
            dir.join("profile_export_aiperf_aggregate.json"),
            dir.join("profile_export_aiperf_aggregate.csv")
        ]
    );
    let csv = std::fs::read_to_string(&paths[1]).unwrap();
    assert_eq!(csv, confidence_csv(&entries, &multi_meta()));
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&paths[0]).unwrap()).unwrap();
    assert_eq!(json, confidence_json(&entries, &multi_meta()));

    let paths = write_sweep(&dir, &sweep_cells(), &sweep_meta(), 0.95).unwrap();
    assert_eq!(
        std::fs::read_to_string(&paths[0]).unwrap(),
        read("sweep/sweep_aggregate/profile_export_aiperf_sweep.json")
    );
    assert_eq!(
        std::fs::read_to_string(&paths[1]).unwrap(),
        read("sweep/sweep_aggregate/profile_export_aiperf_sweep.csv")
    );
    // Nothing but the four files (no temporaries left behind).
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
    std::fs::remove_dir_all(&dir).unwrap();

    let missing = dir.join("no/such/dir");
    let err = write_confidence(&missing, &entries, &multi_meta()).unwrap_err();
    assert!(err.to_string().contains("no/such/dir"), "{err}");
}

#[test]
fn a_cell_aggregate_given_by_the_caller_is_the_one_written() {
    let computed = aggregate(&multi_runs(), 0.95).unwrap();
    let without = vec![SweepCell {
        entries: None,
        parameters: vec![("concurrency".into(), json!(2))],
        runs: multi_runs(),
    }];
    let with = vec![SweepCell {
        entries: Some(computed),
        parameters: vec![("concurrency".into(), json!(2))],
        runs: multi_runs(),
    }];
    assert_eq!(
        sweep_json(&without, &sweep_meta(), 0.95).unwrap(),
        sweep_json(&with, &sweep_meta(), 0.95).unwrap()
    );
}
