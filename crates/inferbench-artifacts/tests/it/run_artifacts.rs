//! A whole run's exports: file set, writing order guarantees, and the Ctrl-C flags.

use crate::common;
use crate::sample;

use std::path::Path;

use inferbench_artifacts::{
    EvidenceWriter, ExportStatus, RunArtifacts, file_names, read_evidence, write_run_artifacts,
};
use inferbench_core::evidence::EVIDENCE_FILE;
use inferbench_core::plan::ExportLevel;
use inferbench_core::{EvidenceEnd, Phase, Record, StopReason};
use serde_json::Value;

fn headers(r: &Record) -> Vec<(String, String)> {
    vec![
        ("User-Agent".into(), "inferbench/0.1.0".into()),
        ("X-Request-ID".into(), r.request_id.clone()),
        ("Authorization".into(), "Bearer sk-test-secret".into()),
    ]
}

/// Write evidence (ending with `end`, or killed when None) and every export; return the dir
/// (and the guard that removes it when dropped).
fn run(
    name: &str,
    end: Option<StopReason>,
    level: ExportLevel,
    prefix: &str,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = common::tmpdir(name);
    let mut w = EvidenceWriter::create(&dir, &sample::header()).unwrap();
    for r in sample::records() {
        w.write_record(&r).unwrap();
    }
    match end {
        Some(stop_reason) => {
            w.write_phase(&sample::window(Phase::Profiling)).unwrap();
            w.finish(EvidenceEnd {
                stop_reason,
                end_ns: 4_000,
                records: 4,
            })
            .unwrap();
        }
        None => {
            w.flush().unwrap();
            drop(w);
        }
    }
    let evidence = read_evidence(&dir.join(EVIDENCE_FILE)).unwrap();
    let summary = common::summary_from_fixture(&common::read("s6_profile_export_aiperf.json"));
    let warm = common::summary_from_fixture(&common::read("s1_profile_export_aiperf.json"));
    let names = file_names(prefix);
    let plan = common::plan();
    let workload = sample::workload();
    let inputs = serde_json::json!({"data": []});
    let manifest = common::manifest();
    let metrics = sample::record_metrics();
    let written = write_run_artifacts(&RunArtifacts {
        dir: &dir,
        names: &names,
        export_level: level,
        evidence: &evidence,
        profiling: &summary,
        warmup: Some(&warm),
        record_metrics: &metrics,
        plan: &plan,
        workload: &workload,
        inputs: &inputs,
        headers: &headers,
        manifest: &manifest,
    })
    .unwrap();
    assert_eq!(written.files.last().unwrap(), ".aiperf_results_ready.json");
    assert!(written.console.contains("LLM Metrics"));
    (tmp, dir)
}

fn json(dir: &Path, name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_completed_run_writes_every_file_and_no_temporaries() {
    let (_tmp, dir) = run(
        "complete",
        Some(StopReason::Completed),
        ExportLevel::Raw,
        "profile_export",
    );
    assert_eq!(
        listing(&dir),
        [
            ".aiperf_results_ready.json",
            "inferbench_evidence.jsonl",
            "inferbench_manifest.json",
            "inputs.json",
            // The run has a warmup: AIPerf's per-phase summaries and their index.
            "phase_manifest.json",
            "phases",
            "profile_export.jsonl",
            "profile_export_aiperf.csv",
            "profile_export_aiperf.json",
            "profile_export_console.txt",
            "profile_export_raw.jsonl",
        ]
    );
    assert_eq!(
        listing(&dir.join("phases/warmup")),
        ["profile_export_aiperf.csv", "profile_export_aiperf.json"]
    );
    let ready = std::fs::read_to_string(dir.join(".aiperf_results_ready.json")).unwrap();
    assert_eq!(
        ready,
        r#"{"ready":true,"was_cancelled":false,"partial":false}"#
    );
    let s = json(&dir, "profile_export_aiperf.json");
    assert_eq!(s["was_cancelled"], false);
    assert_eq!(s["is_complete"], true);
    // Window 0..3_900 ns after the anchor 2026-11-29T18:58:04 UTC.
    assert_eq!(s["start_time"], "2026-11-29T18:58:04.000000");
    assert_eq!(s["end_time"], "2026-11-29T18:58:04.000004");
    assert!(s["warmup_metrics"].is_object());

    let m = json(&dir, "inferbench_manifest.json");
    let files: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(files.contains(&"profile_export_raw.jsonl"));
    assert!(files.contains(&"inferbench_evidence.jsonl"));

    // Profiling records only (the warmup record is left out), in evidence order.
    let recs = std::fs::read_to_string(dir.join("profile_export.jsonl")).unwrap();
    let ids: Vec<String> = recs
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["metadata"]["x_request_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["req-1", "req-2", "req-3"]);
    // With a warmup phase, profiling is the second phase.
    let first: Value = serde_json::from_str(recs.lines().next().unwrap()).unwrap();
    assert_eq!(first["metadata"]["phase_index"], 1);
    assert_eq!(first["metadata"]["profiling_index"], 0);
    assert_eq!(
        first["metadata"]["request_start_ns"],
        sample::ANCHOR + 1_100
    );
    assert_eq!(first["metrics"]["output_sequence_length"]["value"], 1);

    let raw = std::fs::read_to_string(dir.join("profile_export_raw.jsonl")).unwrap();
    assert!(!raw.contains("sk-test-secret"));
    let first: Value = serde_json::from_str(raw.lines().next().unwrap()).unwrap();
    assert_eq!(first["payload"]["messages"][0]["content"], "hi 1");
    assert_eq!(first["responses"][2]["packets"][0]["value"], "[DONE]");
    assert_eq!(first["request_headers"]["Authorization"], "<redacted>");
}

#[test]
fn an_interrupted_run_writes_the_same_files_flagged_partial() {
    for (name, end) in [("ctrlc", Some(StopReason::Interrupted)), ("killed", None)] {
        let (_tmp, dir) = run(name, end, ExportLevel::Records, "profile_export");
        let ready = std::fs::read_to_string(dir.join(".aiperf_results_ready.json")).unwrap();
        assert_eq!(
            ready, r#"{"ready":true,"was_cancelled":true,"partial":true}"#,
            "{name}"
        );
        let s = json(&dir, "profile_export_aiperf.json");
        assert_eq!(s["was_cancelled"], true, "{name}");
        assert_eq!(s["is_complete"], false, "{name}");
        // Records level: no raw file.
        assert!(!dir.join("profile_export_raw.jsonl").exists());
        assert!(dir.join("profile_export.jsonl").exists());
    }
}

#[test]
fn summary_level_and_a_custom_prefix() {
    let (_tmp, dir) = run(
        "prefix",
        Some(StopReason::Completed),
        ExportLevel::Summary,
        "foo",
    );
    assert_eq!(
        listing(&dir),
        [
            ".aiperf_results_ready.json",
            "foo.csv",
            "foo.json",
            "foo_console.txt",
            "inferbench_evidence.jsonl",
            "inferbench_manifest.json",
            "inputs.json",
            "phase_manifest.json",
            "phases",
        ]
    );
    // The prefix names the per-phase files too.
    assert_eq!(
        listing(&dir.join("phases/profiling")),
        ["foo.csv", "foo.json"]
    );
}

#[test]
fn export_status_follows_the_end_line() {
    let mut ev = inferbench_core::Evidence {
        header: sample::header(),
        records: vec![],
        phases: vec![],
        end: None,
    };
    assert_eq!(
        ExportStatus::from_evidence(&ev),
        ExportStatus {
            was_cancelled: true,
            partial: true
        }
    );
    ev.end = Some(EvidenceEnd {
        stop_reason: StopReason::Completed,
        end_ns: 1,
        records: 0,
    });
    assert_eq!(
        ExportStatus::from_evidence(&ev),
        ExportStatus {
            was_cancelled: false,
            partial: false
        }
    );
}

#[test]
fn a_failed_export_names_the_file_and_leaves_no_temporary() {
    let (_tmp, dir) = common::tmpdir("fail");
    // A directory squatting on the final name makes the rename fail.
    std::fs::create_dir(dir.join("x.csv")).unwrap();
    let summary = common::summary_from_fixture(&common::read("s1_profile_export_aiperf.json"));
    let err = inferbench_artifacts::write_summary_csv(&dir, "x.csv", &summary).unwrap_err();
    assert!(err.to_string().contains("x.csv"), "{err}");
    assert_eq!(listing(&dir), ["x.csv"]);
}
