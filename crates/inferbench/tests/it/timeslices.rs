//! `--slice-duration`: AIPerf's timeslice files from a live run, their offline rewrite
//! (byte for byte) and `metrics DIR --slice-duration S` on a run made without the flag.

use crate::common;

use std::path::Path;

use common::{jsonl, read_json, run, stderr, tmpdir};
use serde_json::Value;

const JSON: &str = "profile_export_aiperf_timeslices.json";
const CSV: &str = "profile_export_aiperf_timeslices.csv";
const SLICE_NS: u64 = 50_000_000;

fn profile(dir: &Path, extra: &[&str]) {
    let mut args = vec![
        "profile",
        "--streaming",
        "--request-count",
        "16",
        "--concurrency",
        "2",
        "--isl",
        "16",
        "--osl",
        "6",
        "--random-seed",
        "3",
        "--ui",
        "none",
        "--sim-ttft-ms",
        "2",
        "--sim-itl-ms",
        "4",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn avg(slice: &Value, tag: &str) -> f64 {
    slice[tag]["avg"]
        .as_f64()
        .unwrap_or_else(|| panic!("{tag} missing in slice"))
}

/// Checks the slices against the per-record export, computed independently here.
fn check_slices(dir: &Path) {
    let doc = read_json(&dir.join(JSON));
    let slices = doc["timeslices"].as_array().unwrap();
    assert!(
        slices.len() >= 2,
        "expected several slices: {}",
        slices.len()
    );
    assert!(doc["input_config"].is_object());
    // Every record's wall-clock start, and the grid's origin: the earliest start.
    let starts: Vec<u64> = jsonl(&dir.join("profile_export.jsonl"))
        .iter()
        .map(|l| l["metadata"]["request_start_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(starts.len(), 16);
    let min = *starts.iter().min().unwrap();
    // Records per slice index k = ⌊(start − min) / 50 ms⌋ (within the f64 grid's 256 ns).
    let mut per_k = std::collections::BTreeMap::new();
    for s in &starts {
        *per_k.entry((s - min) / SLICE_NS).or_insert(0u64) += 1;
    }
    // Empty slices are left out, so the slices are exactly the non-empty k, in order.
    assert_eq!(slices.len(), per_k.len());
    let mut total = 0.0;
    for (i, ((k, n), s)) in per_k.iter().zip(slices).enumerate() {
        let start = s["start_ns"].as_u64().unwrap();
        let end = s["end_ns"].as_u64().unwrap();
        let want_start = min + k * SLICE_NS;
        assert!(
            start.abs_diff(want_start) <= 512,
            "slice {i}: {start} vs {want_start}"
        );
        assert!(end > start);
        assert_eq!(avg(s, "request_count"), *n as f64, "slice {i}");
        total += avg(s, "request_count");
        // The slice's throughput divides by its own window.
        let secs = (end - start) as f64 * 1e-9;
        let t = avg(s, "request_throughput");
        assert!((t - *n as f64 / secs).abs() <= 1e-9 * t, "slice {i}: {t}");
        // The sweep-line metrics are there for every slice.
        assert!(s["effective_concurrency"]["avg"].as_f64().is_some());
        // Only the last slice is clipped and says so.
        if i + 1 == slices.len() {
            assert_eq!(s["is_complete"], false);
            assert!(end - start <= SLICE_NS);
        } else {
            assert!(s.get("is_complete").is_none());
            assert!((end - start).abs_diff(SLICE_NS) <= 512);
        }
    }
    assert_eq!(total, 16.0);
    // The CSV: one row per slice, metric and statistic; request_count's avg in each slice.
    let csv = std::fs::read_to_string(dir.join(CSV)).unwrap();
    let mut lines = csv.split("\r\n");
    assert_eq!(
        lines.next(),
        Some("Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value")
    );
    let counts: Vec<&str> = lines
        .filter(|l| l.contains(",Request Count,requests,avg,"))
        .collect();
    assert_eq!(counts.len(), slices.len());
    for (i, (row, (_, n))) in counts.iter().zip(&per_k).enumerate() {
        let s = &slices[i];
        assert_eq!(
            *row,
            format!(
                "{i},{},{},Request Count,requests,avg,{n}.00",
                s["start_ns"], s["end_ns"]
            )
        );
    }
    // The manifest lists both files.
    let files = read_json(&dir.join("inferbench_manifest.json"))["files"].clone();
    let files: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(files.contains(&JSON) && files.contains(&CSV), "{files:?}");
}

#[test]
fn a_live_run_writes_them_and_the_rewrite_gives_the_same_bytes() {
    let dir = tmpdir("timeslices-live");
    profile(&dir, &["--slice-duration", "0.05"]);
    check_slices(&dir);
    let before = (
        std::fs::read(dir.join(JSON)).unwrap(),
        std::fs::read(dir.join(CSV)).unwrap(),
    );
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read(dir.join(JSON)).unwrap() == before.0,
        "{JSON} differs"
    );
    assert!(
        std::fs::read(dir.join(CSV)).unwrap() == before.1,
        "{CSV} differs"
    );
}

#[test]
fn metrics_writes_them_offline_for_a_run_without_the_flag() {
    let dir = tmpdir("timeslices-offline");
    profile(&dir, &[]);
    assert!(!dir.join(JSON).exists());
    let o = run(&["metrics", dir.to_str().unwrap(), "--slice-duration", "0.05"]);
    assert!(o.status.success(), "{}", stderr(&o));
    check_slices(&dir);
    // The manifest now asks for them, so a plain rewrite keeps the same bytes.
    let before = std::fs::read(dir.join(JSON)).unwrap();
    let o = run(&["metrics", dir.to_str().unwrap(), "--write"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(dir.join(JSON)).unwrap() == before);
}

#[test]
fn a_bad_duration_is_refused_by_name() {
    let dir = tmpdir("timeslices-bad");
    let o = run(&[
        "profile",
        "--request-count",
        "1",
        "--ui",
        "none",
        "--slice-duration",
        "0",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--slice-duration"), "{}", stderr(&o));
}
