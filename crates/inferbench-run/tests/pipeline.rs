//! The pipeline in-process: a live run through the library against the built-in simulated
//! server (no binary spawned), then the same run replayed offline through the record sink.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use inferbench_core::plan::ExportLevel;
use inferbench_run::{CellPlan, Layout, Quiet, RunDir, SweepPlan, exit, run_sweep};

/// A fresh directory and its path; the directory is removed when the guard drops, also when
/// the test fails. Every test calls this first (see `private_cache`).
fn temp_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    private_cache();
    let d = tempfile::Builder::new()
        .prefix(&format!("inferbench-run-{name}-"))
        .tempdir()
        .unwrap();
    let p = d.path().to_path_buf();
    (d, p)
}

/// A run's manifest names the executable's SHA-256 (here, this test binary's), and the
/// library remembers it in `$XDG_CACHE_HOME/inferbench/binary-sha256` (`~/.cache/...`
/// without the variable). Point that at the build's own scratch directory, so that the tests
/// never write the developer's `~/.cache`.
fn private_cache() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pipeline-xdg-cache");
        // SAFETY: every test calls this before doing anything else, so while the first call
        // writes the variable the other test threads are waiting in `call_once` or not yet
        // started, and no thread reads the environment other than through `std::env` (whose
        // reads are locked against this write).
        unsafe { std::env::set_var("XDG_CACHE_HOME", dir) };
    });
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
    let (_tmp, dir) = temp_dir("live");
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
}

#[test]
fn repeated_runs_and_their_aggregate_are_one_layout() {
    let (_tmp, dir) = temp_dir("repeats");
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
}

#[test]
fn a_bad_dataset_is_reported_before_the_server_is_touched() {
    let (_tmp, dir) = temp_dir("bad");
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
}
