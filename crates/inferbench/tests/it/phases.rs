//! AIPerf's per-phase exports (docs/file-formats.md, "phase_manifest.json"): a run with a
//! warmup writes each phase's summary alone under `phases/<phase>/` and indexes them in
//! `phase_manifest.json`; a one-phase run writes neither, as AIPerf.

use crate::common::{read_json, run, stderr, tmpdir};

fn profile(dir: &std::path::Path, extra: &[&str]) {
    let d = dir.display().to_string();
    let mut args = vec![
        "profile",
        "-m",
        "mock-model",
        "--endpoint-type",
        "chat",
        "--isl",
        "16",
        "--osl",
        "4",
        "--concurrency",
        "2",
        "--request-count",
        "6",
        "--ui",
        "none",
        "--artifact-dir",
        &d,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_warmup_run_indexes_each_phase_and_summarizes_it_alone() {
    let dir = tmpdir("phases");
    profile(&dir, &["--warmup-request-count", "3"]);
    let m = read_json(&dir.join("phase_manifest.json"));
    let schema = read_json(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../docs/schemas/phase-manifest.schema.json"),
    );
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&m).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(m["schema_version"], 1);
    let phases = m["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{m}");
    let (w, p) = (&phases[0], &phases[1]);
    assert_eq!(w["phase_name"], "warmup");
    assert_eq!(w["phase_kind"], "warmup");
    assert_eq!(w["phase_index"], 0);
    assert!(w["profiling_index"].is_null(), "{w}");
    assert_eq!(p["phase_name"], "profiling");
    assert_eq!(p["phase_index"], 1);
    assert_eq!(p["profiling_index"], 0);
    // 3 warmup and 6 profiling requests, none failed.
    assert_eq!(w["total_request_count"], 3);
    assert_eq!(w["successful_request_count"], 3);
    assert_eq!(p["total_request_count"], 6);
    assert_eq!(p["error_request_count"], 0);
    // The warmup ends before the profiling phase starts (wall-clock ns).
    assert!(
        w["end_ns"].as_u64().unwrap() <= p["start_ns"].as_u64().unwrap(),
        "{m}"
    );
    assert_eq!(
        w["metrics_json"],
        "phases/warmup/profile_export_aiperf.json"
    );
    assert_eq!(
        p["metrics_csv"],
        "phases/profiling/profile_export_aiperf.csv"
    );
    // Each phase's file is that phase alone: its own request count, no warmup block.
    let wj = read_json(&dir.join("phases/warmup/profile_export_aiperf.json"));
    assert_eq!(wj["request_count"]["avg"], 3.0);
    assert!(wj.get("warmup_metrics").is_none());
    let pj = read_json(&dir.join("phases/profiling/profile_export_aiperf.json"));
    let main = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(pj["request_count"]["avg"], 6.0);
    assert_eq!(pj["request_latency"], main["request_latency"]);
    assert!(
        dir.join("phases/profiling/profile_export_aiperf.csv")
            .is_file()
    );
    // The run manifest lists them.
    let files = read_json(&dir.join("inferbench_manifest.json"))["files"].to_string();
    assert!(files.contains("phase_manifest.json"), "{files}");

    // The same directory run again without a warmup keeps no stale phase file.
    profile(&dir, &[]);
    assert!(!dir.join("phase_manifest.json").exists());
    assert!(!dir.join("phases").exists());
}
