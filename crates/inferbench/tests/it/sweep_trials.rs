//! Sweeps with repeated trials: `--parameter-sweep-mode`, the seeds of cells and trials
//! (`--parameter-sweep-same-seed`, `--set-consistent-seed`, `--vary-seed-per-trial`).

use std::path::Path;

use crate::common::{read_json, run, stderr, tmpdir};

const FAST: [&str; 12] = [
    "--request-count",
    "2",
    "--isl",
    "8",
    "--osl",
    "4",
    "--ui",
    "none",
    "--sim-itl-ms",
    "0.2",
    "--sim-ttft-ms",
    "1",
];

fn seed(dir: &Path) -> serde_json::Value {
    read_json(&dir.join("inferbench_manifest.json"))["random_seed"].clone()
}

/// The `sweep cell i/n` lines of stderr, in order.
fn cells_announced(err: &str) -> Vec<String> {
    err.lines()
        .filter_map(|l| l.strip_prefix("inferbench: sweep cell "))
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn a_repeated_sweep_runs_trials_outer_with_a_seed_per_cell() {
    let dir = tmpdir("sweep-repeated");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1,2",
        "--num-profile-runs",
        "2",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Trial 1 of both cells, then trial 2 of both (AIPerf's default order).
    assert_eq!(
        cells_announced(&stderr(&o)),
        [
            "1/2: concurrency_1",
            "2/2: concurrency_2",
            "1/2: concurrency_1",
            "2/2: concurrency_2"
        ]
    );
    for t in ["trial_0001", "trial_0002"] {
        // No --random-seed: 42 (--set-consistent-seed), plus the cell's index.
        let base = dir.join("profile_runs").join(t);
        assert_eq!(seed(&base.join("concurrency_1")), 42, "{t}");
        assert_eq!(seed(&base.join("concurrency_2")), 43, "{t}");
    }
    let agg = read_json(&dir.join("aggregate/concurrency_2/profile_export_aiperf_aggregate.json"));
    assert_eq!(
        agg["metadata"]["run_labels"],
        serde_json::json!(["trial_0001", "trial_0002"])
    );
    let sw = read_json(&dir.join("aggregate/sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(sw["metadata"]["sweep_mode"], "repeated");
    assert!(!dir.join("concurrency_1").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_independent_sweep_runs_cells_outer_and_same_seed_holds_the_seed() {
    let dir = tmpdir("sweep-independent");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1,2",
        "--num-profile-runs",
        "2",
        "--parameter-sweep-mode",
        "independent",
        "--parameter-sweep-same-seed",
        "--random-seed",
        "7",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        cells_announced(&stderr(&o)),
        ["1/2: concurrency_1", "2/2: concurrency_2"]
    );
    for c in ["concurrency_1", "concurrency_2"] {
        for t in ["trial_0001", "trial_0002"] {
            assert_eq!(
                seed(&dir.join(c).join("profile_runs").join(t)),
                7,
                "{c} {t}"
            );
        }
        assert!(
            dir.join(c)
                .join("aggregate/profile_export_aiperf_aggregate.json")
                .is_file()
        );
    }
    let sw = read_json(&dir.join("sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(sw["metadata"]["sweep_mode"], "independent");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vary_seed_per_trial_gives_each_trial_its_derived_seed() {
    let dir = tmpdir("sweep-vary-seed");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "2",
        "--random-seed",
        "5",
        "--vary-seed-per-trial",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // int.from_bytes(sha256(b"5:variation:base:trial:K").digest()[:8], "big") & (2**63-1),
    // computed with Python's hashlib.
    assert_eq!(
        seed(&dir.join("profile_runs/run_0001")),
        5_923_050_222_508_316_399u64
    );
    assert_eq!(
        seed(&dir.join("profile_runs/run_0002")),
        4_322_289_136_321_147_357u64
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_consistent_seed_repeats_do_not_pin_42() {
    let dir = tmpdir("sweep-no-consistent-seed");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "2",
        "--set-consistent-seed",
        "false",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The seed is drawn from OS entropy (1 chance in 2^64 of being 42).
    assert_ne!(seed(&dir.join("profile_runs/run_0001")), 42);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn convergence_stops_the_repeats_once_the_metric_settles() {
    let dir = tmpdir("convergence-stop");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "5",
        "--convergence-metric",
        "request_count",
        "--convergence-mode",
        "cv",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // request_count is 2 in every run: after two runs its cv is 0 < 0.05, so the third
    // run of five never starts.
    assert!(dir.join("profile_runs/run_0002").is_dir());
    assert!(!dir.join("profile_runs/run_0003").exists());
    let agg = read_json(&dir.join("aggregate/profile_export_aiperf_aggregate.json"));
    assert_eq!(
        agg["metadata"]["run_labels"],
        serde_json::json!(["run_0001", "run_0002"])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn distribution_convergence_stops_once_the_last_runs_requests_match_the_earlier_ones() {
    let dir = tmpdir("convergence-distribution");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "5",
        "--convergence-metric",
        "input_sequence_length",
        "--convergence-mode",
        "distribution",
        "--convergence-threshold",
        "0.99",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Every request's ISL is 8: run 1's {8, 8} against run 2's {8, 8} gives D = 0 and
    // p = 1 > 0.99, so the third run of five never starts.
    assert!(dir.join("profile_runs/run_0002").is_dir());
    assert!(!dir.join("profile_runs/run_0003").exists());
    // A metric no record carries: every run happens, with one warning.
    let dir2 = tmpdir("convergence-distribution-missing");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "3",
        "--convergence-metric",
        "no_such_metric",
        "--convergence-mode",
        "distribution",
        "--artifact-dir",
        dir2.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir2.join("profile_runs/run_0003").is_dir());
    assert!(
        stderr(&o).contains("--convergence-metric no_such_metric: no per-request values"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn an_unknown_convergence_metric_runs_every_repeat_and_says_so() {
    let dir = tmpdir("convergence-unknown");
    let mut args = vec![
        "profile",
        "--concurrency",
        "1",
        "--num-profile-runs",
        "3",
        "--convergence-metric",
        "no_such_metric",
        "--artifact-dir",
        dir.to_str().unwrap(),
    ];
    args.extend(FAST);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.join("profile_runs/run_0003").is_dir());
    assert!(
        stderr(&o).contains(
            "--convergence-metric no_such_metric (--convergence-stat avg): not in the run's summary"
        ),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn convergence_flags_are_checked() {
    for (args, want) in [
        (
            &["--convergence-stat", "p50"][..],
            "--convergence-stat needs --convergence-metric",
        ),
        (
            &["--convergence-metric", "request_latency"][..],
            "--convergence-metric needs --num-profile-runs of at least 2",
        ),
        (
            &[
                "--convergence-metric",
                "x",
                "--num-profile-runs",
                "3",
                "--convergence-threshold",
                "1.5",
            ][..],
            "--convergence-threshold 1.5: must be between 0 and 1",
        ),
        (
            &[
                "--convergence-metric",
                "x",
                "--num-profile-runs",
                "3",
                "--convergence-stat",
                "p42",
            ][..],
            "--convergence-stat p42: one of avg, p50",
        ),
        (
            &[
                "--convergence-metric",
                "x",
                "--num-profile-runs",
                "3",
                "--convergence-mode",
                "distribution",
                "--export-level",
                "summary",
            ][..],
            "--convergence-mode distribution needs the per-request records",
        ),
        (
            &[
                "--convergence-metric",
                "x",
                "--num-profile-runs",
                "3",
                "--concurrency",
                "1,2",
            ][..],
            "needs --parameter-sweep-mode independent",
        ),
    ] {
        let mut a = vec!["profile", "--request-count", "1", "--ui", "none"];
        a.extend(args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
