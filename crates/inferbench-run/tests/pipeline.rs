//! The pipeline in-process: a live run through the library against the built-in simulated
//! server (no binary spawned), then the same run replayed offline through the record sink.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use inferbench_core::plan::ExportLevel;
use inferbench_run::{CellPlan, Layout, Quiet, RunDir, SweepPlan, exit, run_sweep};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "inferbench-run-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for (rel, bytes) in files(from) {
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

fn plan(dir: &Path) -> inferbench_core::RunPlan {
    let mut p = inferbench_run::test_plan::plan();
    p.artifacts.dir = dir.display().to_string();
    p.artifacts.run_dir = dir.join("run").display().to_string();
    p
}

fn one_cell(plan: inferbench_core::RunPlan, runs: usize) -> SweepPlan {
    SweepPlan {
        cells: vec![CellPlan {
            plan,
            parameters: vec![],
            dir_name: None,
            seed_label: None,
        }],
        runs,
        confidence_level: 0.95,
        profile_run_cooldown_s: 0.0,
        parameter_sweep_cooldown_s: 0.0,
        disable_warmup_after_first: false,
        artifact_dir_given: true,
        sweep_mode: inferbench_run::SweepMode::Repeated,
        vary_seed_per_trial: false,
        convergence: None,
    }
}

#[test]
fn a_live_run_through_the_library_is_rebuilt_offline_byte_for_byte() {
    let dir = temp_dir("live");
    let mut p = plan(&dir);
    p.load.request_count = 12;
    p.load.warmup_request_count = 3;
    p.artifacts.export_level = ExportLevel::Raw;
    p.goodput = Some("time_to_first_token:1000".into());
    let out = run_sweep(&one_cell(p, 1), Arc::new(Quiet)).unwrap();
    assert_eq!(out.code, exit::OK);
    assert!(out.failure.is_none());

    let run = RunDir::open(&dir.join("run")).unwrap();
    assert_eq!(run.layout, Layout::Run);
    let ev = run.load_evidence().unwrap();
    // Each scheduled request is exactly one record: 3 warmup + 12 profiling.
    assert_eq!(ev.records.len(), 15);
    let summary = run.summary().unwrap().unwrap();
    let count = summary.metric("request_count").unwrap();
    assert_eq!(count.stats, vec![("avg".to_string(), 12.0)]);
    let manifest = run.manifest().unwrap();
    assert!(
        manifest
            .files
            .contains(&"inferbench_client_resources.json".to_string())
    );
    assert!(run.client_resources().unwrap().is_some());

    // Offline: the same sink over the evidence file writes every file again, identically.
    let copy = dir.join("copy");
    copy_dir(&dir.join("run"), &copy);
    let before = files(&copy);
    let rd = RunDir::open(&copy).unwrap();
    inferbench_run::offline::rewrite(&rd, &rd.manifest().unwrap()).unwrap();
    let after = files(&copy);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &before {
        assert!(
            after[name] == *bytes,
            "{name} differs after the offline rewrite"
        );
    }
    let (scores, partial) = inferbench_run::offline::rescore(&rd, &manifest).unwrap();
    assert!(!partial);
    assert!(inferbench_run::offline::differences(&scores, &summary).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repeated_runs_and_their_aggregate_are_one_layout() {
    let dir = temp_dir("repeats");
    let mut p = plan(&dir);
    p.load.request_count = 4;
    let out = run_sweep(&one_cell(p, 2), Arc::new(Quiet)).unwrap();
    assert_eq!(out.code, exit::OK);
    let root = RunDir::open(&dir.join("run")).unwrap();
    let Layout::Repeated { runs } = &root.layout else {
        panic!("{:?}", root.layout)
    };
    assert_eq!(runs.len(), 2);
    assert_eq!(root.runs().len(), 2);
    let agg = root.aggregate().unwrap().unwrap();
    assert_eq!(agg.metadata["num_successful_runs"], 2);
    assert!(agg.metrics.iter().any(|(k, _)| k == "request_latency_p99"));
    assert!(agg.metrics.iter().any(|(k, _)| k == "request_count_avg"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_dataset_is_reported_before_the_server_is_touched() {
    let dir = temp_dir("bad");
    let mut p = plan(&dir);
    // Nothing listens here: a prepared plan would fail at the probe, with exit 1.
    p.target = inferbench_core::plan::Target::Url {
        url: "http://127.0.0.1:1".into(),
    };
    p.dataset.input_file = Some(dir.join("missing.jsonl").display().to_string());
    let e = run_sweep(&one_cell(p, 1), Arc::new(Quiet)).unwrap_err();
    assert_eq!(e.code, exit::INPUT, "{}", e.message);
    assert!(e.message.contains("missing.jsonl"), "{}", e.message);
    assert!(!dir.join("run").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
